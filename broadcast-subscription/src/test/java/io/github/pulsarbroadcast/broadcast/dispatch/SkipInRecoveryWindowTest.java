package io.github.pulsarbroadcast.broadcast.dispatch;

import static org.testng.Assert.assertEquals;

import io.github.pulsarbroadcast.broadcast.cursor.AckResult;
import java.util.concurrent.CompletableFuture;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.testng.annotations.Test;

/**
 * The sync before an operator's skip ({@link PeriodicSync#runBeforeSkip}) brings the mark-delete position up to the
 * consumers' lowest acknowledged position in a recovery window a reset-cursor opened, and not in one a crash opened:
 * there a consumer whose name the subscription does not know yet resumes at the mark-delete position, and the skip
 * would otherwise pass its messages below the known consumers'. Regression (forty-second session, found by a
 * read-only review of the forty-first session's skip fix).
 *
 * <p>Threading: the test thread plays the dispatch thread.
 */
public class SkipInRecoveryWindowTest {

    private static final long LEDGER = 3;

    @Test(groups = "unit", timeOut = 30_000)
    public void aCrashWindowKeepsTheMarkDeleteWhereUnknownConsumersResume() throws Exception {
        ModelHarness world = new ModelHarness();
        ModelLedger ledger = new ModelLedger(LEDGER, 1_000);
        SubscriptionEngine engine = engine(world, ledger, true); // loaded after a crash: the window is open
        PositionImpl before = ledger.markDeleted();
        BroadcastConsumer known = joinAndAck(world, ledger, engine, 8);
        engine.syncBeforeSkip();
        assertEquals(ledger.markDeleted(), before, "the mark-delete where a consumer not back yet resumes");
        assertEquals(known.cursor().acknowledged(), PositionImpl.get(LEDGER, 8));
    }

    @Test(groups = "unit", timeOut = 30_000)
    public void aResetWindowLetsTheSkipCountFromTheConsumers() throws Exception {
        ModelHarness world = new ModelHarness();
        ModelLedger ledger = new ModelLedger(LEDGER, 1_000);
        SubscriptionEngine engine = engine(world, ledger, false);
        engine.beginReset();
        engine.cursorReset(); // at the mark-delete position: the window opens, every position restarts there
        engine.finishReset(CompletableFuture.completedFuture(null)).join();
        joinAndAck(world, ledger, engine, 8);
        engine.syncBeforeSkip();
        assertEquals(ledger.markDeleted(), PositionImpl.get(LEDGER, 8), "up to the only consumer's acknowledged");
    }

    /**
     * With a retention of 0 the consumers a reset disconnects are forgotten: one that is not back yet is unknown, so
     * the skip must not count from the one that is (a second review of this fix).
     */
    @Test(groups = "unit", timeOut = 30_000)
    public void aResetWindowWithoutRetentionKeepsTheMarkDeleteForConsumersNotBack() throws Exception {
        ModelHarness world = new ModelHarness();
        ModelLedger ledger = new ModelLedger(LEDGER, 1_000);
        SubscriptionEngine engine = engine(world, ledger, false, 0);
        BroadcastConsumer away = engine.join(2, "away", ModelHarness.discarding(), InitialPosition.Earliest, 0);
        engine.flow(away, 100);
        world.runAll();
        PositionImpl before = ledger.markDeleted();
        engine.beginReset();
        engine.cursorReset();
        engine.finishReset(CompletableFuture.completedFuture(null)).join();
        engine.leave(away); // retention 0: its position is not kept
        world.runAll();
        joinAndAck(world, ledger, engine, 8);
        engine.syncBeforeSkip();
        assertEquals(ledger.markDeleted(), before, "the mark-delete where the forgotten consumer resumes");
    }

    /**
     * A window a reset opened, carried over a graceful move (the save on close says what kind of window it was): the
     * next owner knows every consumer, so the skip counts from them. Found by a second review of this fix (the
     * carried window counted as a crash's, and a reset, a move and a skip skipped less than stock).
     */
    @Test(groups = "unit", timeOut = 30_000)
    public void aResetWindowCarriedOverAMoveLetsTheSkipCountFromTheConsumers() throws Exception {
        ModelHarness world = new ModelHarness();
        ModelLedger ledger = new ModelLedger(LEDGER, 1_000);
        ModelPositionStore store = new ModelPositionStore(world::wallMillis);
        SubscriptionEngine first = new SubscriptionEngine("persistent://t/ns/skip-window", "fleet", -1, ledger,
                ModelHarness.config(10, 5, 60, 60, 1000, 1000), io.github.pulsarbroadcast.broadcast.WindowBudget
                .unlimited(), world, () -> world.nowNanos, new SubscriptionStart(store, null, false));
        first.beginReset();
        first.cursorReset();
        first.finishReset(CompletableFuture.completedFuture(null)).join();
        BroadcastConsumer car = joinAndAck(world, ledger, first, 8);
        first.close().join();
        first.leave(car);
        world.runAll();
        assertEquals(store.savedOnClose, true);
        assertEquals(store.joinFloor.windowAfterReset(), true, "the save on close says a reset opened the window");

        SubscriptionStart start = StartDecision.resume(store, ModelHarness.config(10, 5, 60, 60, 1000, 1000),
                world::wallMillis, () -> true, "[t][s]").join();
        assertEquals(start.recovering, true, "what is left of the window");
        SubscriptionEngine next = new SubscriptionEngine("persistent://t/ns/skip-window", "fleet", -1, ledger,
                ModelHarness.config(10, 5, 60, 60, 1000, 1000), io.github.pulsarbroadcast.broadcast.WindowBudget
                .unlimited(), world, () -> world.nowNanos, start);
        next.syncBeforeSkip();
        assertEquals(ledger.markDeleted(), PositionImpl.get(LEDGER, 8), "up to the retained consumer's acknowledged");
    }

    private static SubscriptionEngine engine(ModelHarness world, ModelLedger ledger, boolean crashed) {
        return engine(world, ledger, crashed, 60);
    }

    private static SubscriptionEngine engine(ModelHarness world, ModelLedger ledger, boolean crashed,
                                             int retentionSeconds) {
        return new SubscriptionEngine("persistent://t/ns/skip-window", "fleet", -1, ledger,
                ModelHarness.config(10, 5, 60, retentionSeconds, 1000, 0),
                io.github.pulsarbroadcast.broadcast.WindowBudget.unlimited(), world, () -> world.nowNanos,
                new SubscriptionStart(new ModelPositionStore(), null, crashed));
    }

    /** A consumer that joins at the earliest position, gets ten messages and acknowledges up to {@code upTo}. */
    private static BroadcastConsumer joinAndAck(ModelHarness world, ModelLedger ledger, SubscriptionEngine engine,
                                                long upTo) throws Exception {
        BroadcastConsumer car = engine.join(1, "car", ModelHarness.discarding(), InitialPosition.Earliest, 0);
        engine.flow(car, 100);
        for (int i = 0; i < 10; i++) {
            ledger.publish(false);
        }
        world.settle(ledger);
        assertEquals(engine.acknowledge(car, LEDGER, upTo, true), AckResult.ADVANCED);
        world.runAll();
        return car;
    }
}
