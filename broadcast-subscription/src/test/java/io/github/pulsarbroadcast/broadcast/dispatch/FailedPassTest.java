package io.github.pulsarbroadcast.broadcast.dispatch;

import static org.testng.Assert.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.testng.annotations.Test;

/**
 * A fan-out pass that throws (a defect: nothing in it is meant to) does not stop the subscription: what was built for
 * the other consumers is sent, the consumer it threw on is placed again, the tail reads again after the back-off, and
 * nothing leaks. Regression (forty-fourth session, found by two read-only reviews of the read path): the exception
 * only reached the executor's log, the tail read was never issued again, and the pass's buffers leaked.
 *
 * <p>Threading: the test thread plays the dispatch thread.
 */
public class FailedPassTest {

    @Test(groups = "unit", timeOut = 30_000)
    public void aPassThatThrowsOnOneConsumerLosesNothingAndGoesOn() throws Exception {
        ModelHarness world = new ModelHarness();
        ModelLedger ledger = new ModelLedger(3, 5);
        SubscriptionEngine engine = world.newEngine("persistent://t/ns/failed-pass", ledger);
        List<PositionImpl> gotA = new ArrayList<>();
        List<PositionImpl> gotB = new ArrayList<>();
        BroadcastConsumer a = world.joinWithPermits(engine, ledger, 1, "car-a", gotA, InitialPosition.Latest);
        BroadcastConsumer b = world.joinWithPermits(engine, ledger, 2, "car-b", gotB, InitialPosition.Latest);
        long failuresBefore = engine.counters().readFailures;

        // The next normalize is the pass's, for the first consumer it serves: it throws there.
        ledger.onNextNormalize = () -> {
            throw new IllegalStateException("simulated: a defect in the pass");
        };
        List<PositionImpl> published = new ArrayList<>();
        published.add(ledger.publish(false));
        world.settle(ledger);
        assertEquals(engine.counters().readFailures, failuresBefore + 1, "counted as a failed read");
        published.addAll(world.publishSettled(ledger, 3));
        world.advance(StorageReads.newBackoff().next() + 1); // the retry's back-off
        world.settle(ledger);
        published.addAll(world.publishSettled(ledger, 2));

        assertEquals(gotA, published, "car-a: everything, in order, once");
        assertEquals(gotB, published, "car-b: everything, in order, once");
        engine.leave(a);
        engine.leave(b);
        engine.close().join();
        engine.closeFanOut();
        world.settle(ledger);
        assertEquals(ledger.unreleased(), List.of(), "nothing leaked, the failed pass's entry included");
    }

    /**
     * The same on a topic that then goes quiet: the consumers the pass had not served yet were left waiting at the
     * tail for an entry the retry reads past, until some later write (a review of the first version of the fix).
     */
    @Test(groups = "unit", timeOut = 30_000)
    public void aPassThatThrowsOnAQuietTopicStillDeliversWhatItRead() throws Exception {
        ModelHarness world = new ModelHarness();
        ModelLedger ledger = new ModelLedger(3, 5);
        SubscriptionEngine engine = world.newEngine("persistent://t/ns/failed-pass-quiet", ledger);
        List<PositionImpl> gotA = new ArrayList<>();
        List<PositionImpl> gotB = new ArrayList<>();
        world.joinWithPermits(engine, ledger, 1, "car-a", gotA, InitialPosition.Latest);
        world.joinWithPermits(engine, ledger, 2, "car-b", gotB, InitialPosition.Latest);
        ledger.onNextNormalize = () -> {
            throw new IllegalStateException("simulated: a defect in the pass");
        };
        long failuresBefore = engine.counters().readFailures;
        PositionImpl only = ledger.publish(false);
        world.settle(ledger);
        assertEquals(engine.counters().readFailures, failuresBefore + 1, "the pass threw");
        world.advance(StorageReads.newBackoff().next() + 1);
        world.settle(ledger);
        assertEquals(gotA, List.of(only), "car-a");
        assertEquals(gotB, List.of(only), "car-b");
    }
}
