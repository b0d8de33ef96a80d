package io.github.pulsarbroadcast.broadcast.dispatch;

import static org.testng.Assert.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.testng.annotations.BeforeMethod;
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

    private ModelHarness world;
    private ModelLedger ledger;
    private SubscriptionEngine engine;
    private BroadcastConsumer carA;
    private BroadcastConsumer carB;
    private final List<PositionImpl> gotA = new ArrayList<>();
    private final List<PositionImpl> gotB = new ArrayList<>();

    /** Two consumers at the tail of an empty topic. */
    @BeforeMethod(alwaysRun = true)
    public void twoConsumersAtTheTail() throws Exception {
        world = new ModelHarness();
        ledger = new ModelLedger(3, 5);
        engine = world.newEngine("persistent://t/ns/failed-pass", ledger);
        gotA.clear();
        gotB.clear();
        carA = world.joinWithPermits(engine, ledger, 1, "car-a", gotA, InitialPosition.Latest);
        carB = world.joinWithPermits(engine, ledger, 2, "car-b", gotB, InitialPosition.Latest);
    }

    @Test(groups = "unit", timeOut = 30_000)
    public void aPassThatThrowsOnOneConsumerLosesNothingAndGoesOn() throws Exception {
        long failuresBefore = engine.counters().readFailures;
        // The next normalize is the pass's, for the first consumer it serves: it throws there.
        ledger.onNextNormalize = ledgerThrows();
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
        assertNothingLeaksOnClose();
    }

    /**
     * The same on a topic that then goes quiet: the consumers the pass had not served yet were left waiting at the
     * tail for an entry the retry reads past, until some later write (a review of the first version of the fix).
     */
    @Test(groups = "unit", timeOut = 30_000)
    public void aPassThatThrowsOnAQuietTopicStillDeliversWhatItRead() throws Exception {
        ledger.onNextNormalize = ledgerThrows();
        long failuresBefore = engine.counters().readFailures;
        PositionImpl only = ledger.publish(false);
        world.settle(ledger);
        assertEquals(engine.counters().readFailures, failuresBefore + 1, "the pass threw");
        world.advance(StorageReads.newBackoff().next() + 1);
        world.settle(ledger);
        assertEquals(gotA, List.of(only), "car-a");
        assertEquals(gotB, List.of(only), "car-b");
    }

    /**
     * A pass that throws before it serves anyone, while it appends the batch to a window that holds entries: the
     * batch is released and the waiting consumers catch up from it. Regression (left by the forty-fourth note): the
     * lines before the serving were outside the pass's try, so the batch leaked and the consumers waited at the tail
     * for the entry the retry had read past.
     */
    @Test(groups = "unit", timeOut = 30_000)
    public void aPassThatThrowsBeforeServingAnyoneLosesNothing() throws Exception {
        List<PositionImpl> published = new ArrayList<>(world.publishSettled(ledger, 1)); // the window holds one
        long failuresBefore = engine.counters().readFailures;
        ledger.onNextNormalize = ledgerThrows(); // the pass's first normalize: the window's end, against the batch
        published.add(ledger.publish(false));
        world.settle(ledger);
        assertEquals(engine.counters().readFailures, failuresBefore + 1, "the pass threw");
        world.advance(StorageReads.newBackoff().next() + 1);
        world.settle(ledger);

        assertEquals(gotA, published, "car-a");
        assertEquals(gotB, published, "car-b");
        assertNothingLeaksOnClose();
    }

    /**
     * A consumer whose placing after a failed pass throws too is placed again by the next periodic sync. Regression
     * (left by the forty-fourth note): it stayed idle with its permits, and a client sends no flow while it holds
     * permits, so it got nothing more until it reconnected.
     */
    @Test(groups = "unit", timeOut = 30_000)
    public void aConsumerWhosePlacingThrowsIsPlacedAgainByTheNextSync() throws Exception {
        ledger.onNextNormalize = () -> {
            ledger.onNextNormalize = ledgerThrows(); // the next: the placing of the first consumer the pass moved
            throw new IllegalStateException("simulated: a defect in the pass");
        };
        List<PositionImpl> published = new ArrayList<>();
        published.add(ledger.publish(false));
        world.settle(ledger);
        world.advance(StorageReads.newBackoff().next() + 1);
        world.settle(ledger);
        engine.sync();
        world.settle(ledger);
        published.addAll(world.publishSettled(ledger, 2));

        assertEquals(gotA, published, "car-a");
        assertEquals(gotB, published, "car-b");
        assertNothingLeaksOnClose();
    }

    private static Runnable ledgerThrows() {
        return () -> {
            throw new IllegalStateException("simulated: a defect in the pass");
        };
    }

    private void assertNothingLeaksOnClose() {
        engine.leave(carA);
        engine.leave(carB);
        engine.close().join();
        engine.closeFanOut();
        world.settle(ledger);
        assertEquals(ledger.unreleased(), List.of(), "nothing leaked, the failed pass's entries included");
    }
}
