package io.github.pulsarbroadcast.broadcast.dispatch;

import static org.testng.Assert.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.testng.annotations.Test;

/**
 * Acknowledgements that arrive after a redelivery rewound the consumer (the stock Java client sends a redelivery at
 * once and its grouped acknowledgements up to 100 ms later) keep their messages from being sent again; what is still
 * unacknowledged is, and new messages follow. Regression (twenty-sixth session's review): only individually
 * acknowledged entries were skipped, so acks that had moved the acknowledged position were ignored and the
 * application received messages it had acknowledged.
 *
 * <p>Threading: the test thread plays the dispatch thread and the connection.
 */
public class AcksAfterRedeliveryTest {

    private static final long LEDGER = 3;

    @Test(groups = "unit", timeOut = 30_000)
    public void acksAfterTheRewindAreNotSentAgain() throws Exception {
        assertEquals(resentAfterAcking(0, 10), List.of(), "all ten acknowledged after the rewind");
        assertEquals(resentAfterAcking(1, 10), List.of(PositionImpl.get(LEDGER, 0)), "only the unacknowledged one");
    }

    /**
     * Delivers 10 entries, redelivers, acknowledges entries {@code from .. to - 1} individually, asks for more; returns
     * what was sent after the redelivery, before one more entry is published (which must follow).
     */
    private static List<PositionImpl> resentAfterAcking(int from, int to) throws Exception {
        ModelHarness world = new ModelHarness();
        ModelLedger ledger = new ModelLedger(LEDGER, 1_000);
        SubscriptionEngine engine = world.newEngine("persistent://t/ns/acks-after-rewind", ledger);
        List<PositionImpl> received = new ArrayList<>();
        BroadcastConsumer bc = engine.join(1, "car", ModelHarness.recording(received), InitialPosition.Earliest, 0);
        engine.flow(bc, 10);
        for (int i = 0; i < 10; i++) {
            ledger.publish(false);
        }
        world.settle(ledger);
        assertEquals(received.size(), 10, "delivered: " + received);
        received.clear();

        engine.redeliver(bc, 1);
        world.settle(ledger);
        for (int i = from; i < to; i++) {
            engine.acknowledge(bc, LEDGER, i, false);
        }
        engine.flow(bc, 10);
        world.settle(ledger);
        List<PositionImpl> resent = new ArrayList<>(received);

        received.clear();
        ledger.publish(false);
        world.settle(ledger);
        assertEquals(received, List.of(PositionImpl.get(LEDGER, 10)), "a new message follows");
        return resent;
    }
}
