package io.github.pulsarbroadcast.broadcast.dispatch;

import static org.testng.Assert.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.testng.annotations.Test;

/**
 * A reset-cursor on a terminated topic replays from the reset position to the end, then tells the end again, as
 * stock does. Regression (twenty-sixth session's review): the end that a tail read had found before the reset stuck,
 * and a consumer coming back after the reset was told "end of topic" with nothing replayed.
 *
 * <p>Threading: the test thread plays the dispatch thread, the connection and the admin's reset.
 */
public class ResetAfterTerminationTest {

    private static final long LEDGER = 3;

    @Test(groups = "unit", timeOut = 30_000)
    public void aResetAfterTheEndReplaysToTheEnd() throws Exception {
        ModelHarness world = new ModelHarness();
        ModelLedger ledger = new ModelLedger(LEDGER, 1_000);
        SubscriptionEngine engine = world.newEngine("persistent://t/ns/reset-terminated", ledger);
        List<PositionImpl> received = new ArrayList<>();
        AtomicInteger ends = new AtomicInteger();
        ModelHarness.Connection cnx = new ModelHarness.Connection(new ModelHarness.Deliveries() {
            @Override
            public void delivered(BroadcastConsumer consumer, WindowEntry entry, long epoch) {
                received.add(entry.position);
            }

            @Override
            public void endOfTopic(long consumerId) {
                ends.incrementAndGet();
            }
        });
        BroadcastConsumer car = engine.join(1, "car", cnx, InitialPosition.Earliest, 0);
        engine.flow(car, 100);
        for (int i = 0; i < 5; i++) {
            ledger.publish(false);
        }
        world.settle(ledger);
        ledger.terminate();
        world.settle(ledger);
        assertEquals(received.size(), 5, "delivered: " + received);
        assertEquals(ends.get(), 1, "told the end");

        // As stock's reset: the consumers are disconnected, the cursor moves back, they subscribe again.
        engine.leave(car);
        engine.beginReset();
        ledger.resetTo(PositionImpl.get(LEDGER, -1));
        engine.cursorReset();
        engine.endReset();
        world.settle(ledger);
        received.clear();
        BroadcastConsumer back = engine.join(2, "car", cnx, InitialPosition.Earliest, 0);
        engine.flow(back, 100);
        world.settle(ledger);
        List<PositionImpl> expected = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            expected.add(PositionImpl.get(LEDGER, i));
        }
        assertEquals(received, expected, "replayed from the reset position");
        assertEquals(ends.get(), 2, "then told the end again");
    }
}
