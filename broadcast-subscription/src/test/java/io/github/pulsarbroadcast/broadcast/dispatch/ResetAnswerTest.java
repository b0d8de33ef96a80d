package io.github.pulsarbroadcast.broadcast.dispatch;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;
import static org.testng.Assert.expectThrows;

import io.github.pulsarbroadcast.broadcast.WindowBudget;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.apache.pulsar.broker.service.BrokerServiceException;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.testng.annotations.BeforeMethod;
import org.testng.annotations.Test;

/**
 * A reset-cursor answers the operator only when the positions it restarted are saved ({@link ResetGate#finish}).
 * Regression (forty-fourth session, found by the dispatch model test once saves could fail: seed 20261183783817): the
 * reset answered success although its save had failed, and a broker crash before the next periodic save brought back
 * every consumer's position from before the reset, so a reset to replay replayed nothing.
 *
 * <p>Threading: the test thread plays the dispatch thread and the admin's.
 */
public class ResetAnswerTest {

    private static final long LEDGER = 3;

    private ModelHarness world;
    private ModelPositionStore store;
    private SubscriptionEngine engine;

    @BeforeMethod(alwaysRun = true)
    public void newEngine() {
        world = new ModelHarness();
        store = new ModelPositionStore(world::wallMillis);
        engine = engine(world, store);
    }

    @Test(groups = "unit", timeOut = 30_000)
    public void aResetWhoseSaveFailsAnswersAnError() throws Exception {
        engine.beginReset();
        store.nextSaveFails = true;
        CompletableFuture<Void> answer = engine.finishReset(stockResetThatCalls(engine));
        CompletionException e = expectThrows(CompletionException.class, answer::join);
        assertTrue(e.getCause() instanceof BrokerServiceException, "stock's admin call answers 500 with it: " + e);
        assertTrue(e.getCause().getMessage().contains("Run the reset-cursor again"), e.getCause().getMessage());
        assertEquals(store.failedSaves, 1);
        assertJoinsAccepted(engine, world, "the failed reset ended");
    }

    @Test(groups = "unit", timeOut = 30_000)
    public void aResetWhoseSaveWorksAnswersOnceSaved() throws Exception {
        int savesBefore = store.saves;
        engine.beginReset();
        engine.finishReset(stockResetThatCalls(engine)).join();
        assertEquals(store.saves, savesBefore + 1, "saved before it answered");
        assertJoinsAccepted(engine, world, "the reset ended");
    }

    @Test(groups = "unit", timeOut = 30_000)
    public void aFailedStockResetAnswersItsOwnErrorAndEnds() throws Exception {
        engine.beginReset();
        BrokerServiceException.SubscriptionBusyException busy =
                new BrokerServiceException.SubscriptionBusyException("simulated: busy");
        CompletionException e = expectThrows(CompletionException.class,
                () -> engine.finishReset(CompletableFuture.failedFuture(busy)).join());
        assertEquals(e.getCause(), busy, "stock's error, as stock answers it");
        assertJoinsAccepted(engine, world, "the failed reset ended");
    }

    /**
     * A topic unload that overtakes the reset saves the positions from before it on close, which the next owner
     * resumes: the reset answers an error, not success (a review of the fix, forty-fourth session).
     */
    @Test(groups = "unit", timeOut = 30_000)
    public void aResetOvertakenByACloseAnswersAnError() throws Exception {
        engine.beginReset();
        engine.close().join();
        CompletableFuture<Void> answer = engine.finishReset(stockResetThatCalls(engine));
        CompletionException e = expectThrows(CompletionException.class, answer::join);
        assertTrue(e.getCause().getMessage().contains("closed during the reset"), e.getCause().getMessage());
    }

    /**
     * The same when the close overtakes the reset between the engine's own closed check and its save (a review of the
     * fix): the save, refused because the save on close was made, fails the answer.
     */
    @Test(groups = "unit", timeOut = 30_000)
    public void aSaveOvertakenByTheCloseFails() throws Exception {
        PositionSync sync = new PositionSync(store, 1000, "[t][s]", world, () -> world.nowNanos,
                (closing, wallNowMillis) -> null);
        RetainedCursors cursors = new RetainedCursors();
        sync.saveNow(cursors, world.nowNanos, true).join(); // the close
        CompletableFuture<Void> late = sync.saveNow(cursors, world.nowNanos, false);
        assertTrue(late.isCompletedExceptionally(), "refused after the close, so a reset cannot answer success");
        assertTrue(sync.saveNow(cursors, world.nowNanos, true).isDone() && !sync.saveNow(cursors, world.nowNanos,
                true).isCompletedExceptionally(), "a second close save is still nothing to do");
    }

    /** Stock's reset as {@code PersistentSubscription} runs it: the dispatcher is told, then the future completes. */
    private static CompletableFuture<Void> stockResetThatCalls(SubscriptionEngine engine) {
        engine.cursorReset();
        return CompletableFuture.completedFuture(null);
    }

    private static void assertJoinsAccepted(SubscriptionEngine engine, ModelHarness world, String why)
            throws Exception {
        BroadcastConsumer car = engine.join(7, "car", ModelHarness.discarding(), InitialPosition.Earliest, 0);
        world.runAll();
        assertTrue(car != null, why);
    }

    private static SubscriptionEngine engine(ModelHarness world, ModelPositionStore store) {
        return new SubscriptionEngine("persistent://t/ns/reset-answer", "fleet", -1, new ModelLedger(LEDGER, 1_000),
                ModelHarness.config(10, 5, 60, 60, 1000, 1000), WindowBudget.unlimited(), world,
                () -> world.nowNanos, new SubscriptionStart(store, null, false));
    }
}
