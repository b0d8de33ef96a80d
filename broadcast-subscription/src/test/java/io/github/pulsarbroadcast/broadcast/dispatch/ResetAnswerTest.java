package io.github.pulsarbroadcast.broadcast.dispatch;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertTrue;
import static org.testng.Assert.expectThrows;

import io.github.pulsarbroadcast.broadcast.WindowBudget;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.apache.pulsar.broker.service.BrokerServiceException;
import org.apache.pulsar.broker.service.BrokerServiceException.SubscriptionFencedException;
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

    /** An engine with one consumer, {@code car-known}, which left (its position retained). */
    @BeforeMethod(alwaysRun = true)
    public void newEngine() throws Exception {
        world = new ModelHarness();
        store = new ModelPositionStore(world::wallMillis);
        engine = engine(world, store);
        BroadcastConsumer known = engine.join(5, "car-known", ModelHarness.discarding(), InitialPosition.Earliest, 0);
        world.runAll();
        engine.leave(known);
        world.runAll();
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
        BroadcastConsumer known = engine.join(6, "car-known", ModelHarness.discarding(), InitialPosition.Earliest, 0);
        assertTrue(known.resumed, "the failed reset ended: names it holds resume");
    }

    /**
     * After a reset whose save failed, a consumer new to the subscription is refused until a save works: the store
     * still holds the join floor from before the reset, above the reset position where the new name would start, so
     * a crash would bring it back at that floor, past what it was sent. Regression (forty-fifth session, found by the
     * dispatch model: seed 20261211795669, "car-f joined after the last save before the crash and came back at 19:3,
     * past what it acknowledged: 8:3").
     */
    @Test(groups = "unit", timeOut = 30_000)
    public void aResetWhoseSaveFailsRefusesNewNamesUntilASaveWorks() throws Exception {
        engine.beginReset();
        store.nextSaveFails = true;
        expectThrows(CompletionException.class, () -> engine.finishReset(stockResetThatCalls(engine)).join());
        SubscriptionFencedException refused = expectThrows(SubscriptionFencedException.class,
                () -> engine.join(7, "car-new", ModelHarness.discarding(), InitialPosition.Latest, 0));
        assertTrue(refused.getMessage().contains("car-new (new to it) is refused until a save works"),
                refused.getMessage());
        world.advance(60_000); // past the sync interval: the next sync saves (the reset left it to do)
        engine.sync();
        world.runAll();
        assertJoinsAccepted(engine, world, "a save worked");
    }

    /** A reset whose save works refuses no one once it answered (its own save clears the refusal). */
    @Test(groups = "unit", timeOut = 30_000)
    public void aResetWhoseSaveWorksRefusesNoNewName() throws Exception {
        engine.beginReset();
        engine.finishReset(stockResetThatCalls(engine)).join();
        BroadcastConsumer car = engine.join(7, "car-new", ModelHarness.discarding(), InitialPosition.Latest, 0);
        assertTrue(car != null && !car.resumed, "a new name joins");
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

    /**
     * A reset whose save works lifts the refusal of new names before it answers: a new name that joins as soon as the
     * answer arrives is accepted. Regression (a review, forty-fifth session): the refusal was lifted by a callback of
     * the store's future registered before the reset's own, and a future runs its callbacks last-registered first.
     */
    @Test(groups = "unit", timeOut = 30_000)
    public void aResetAnswersOnlyOnceNewNamesAreAcceptedAgain() throws Exception {
        store.holdSaves = true;
        engine.beginReset();
        CompletableFuture<Void> answer = engine.finishReset(stockResetThatCalls(engine));
        assertFalse(answer.isDone(), "waits for its save");
        CompletableFuture<BroadcastConsumer> joinedOnAnswer = answer.thenApply(v -> {
            try {
                return engine.join(7, "car-new", ModelHarness.discarding(), InitialPosition.Latest, 0);
            } catch (BrokerServiceException e) {
                throw new CompletionException(e);
            }
        });
        store.heldSaves.get(0).run();
        assertTrue(joinedOnAnswer.join() != null, "accepted as soon as the reset answered");
    }

    /**
     * A periodic save captured before a reset and completing after the reset's save failed does not lift the
     * refusal: it holds the positions and the join floor from before the reset.
     */
    @Test(groups = "unit", timeOut = 30_000)
    public void aSaveCapturedBeforeTheResetDoesNotLetNewNamesIn() throws Exception {
        store.holdSaves = true;
        world.advance(60_000);
        engine.sync();
        world.runAll(); // the periodic save (the setup's join and leave changed something): captured, held
        assertEquals(store.heldSaves.size(), 1);
        engine.beginReset();
        store.nextSaveFails = true;
        expectThrows(CompletionException.class, () -> engine.finishReset(stockResetThatCalls(engine)).join());
        store.heldSaves.get(0).run(); // the save from before the reset works
        world.runAll();
        expectThrows(SubscriptionFencedException.class,
                () -> engine.join(7, "car-new", ModelHarness.discarding(), InitialPosition.Latest, 0));
    }

    /**
     * A reset on a subscription whose topic left this broker (its positions abandoned: no save may land) answers an
     * error, not success with positions no store holds. Regression (left by the forty-fourth note): the save returned
     * success without saving.
     */
    @Test(groups = "unit", timeOut = 30_000)
    public void aResetAfterTheTopicLeftTheBrokerAnswersAnError() throws Exception {
        engine.abandonPositions();
        int savesBefore = store.saves;
        engine.beginReset();
        CompletableFuture<Void> answer = engine.finishReset(stockResetThatCalls(engine));
        CompletionException e = expectThrows(CompletionException.class, answer::join);
        assertTrue(e.getCause().getMessage().contains("left this broker"), e.getCause().getMessage());
        assertTrue(e.getCause().getMessage().contains("the broker that serves it next"), e.getCause().getMessage());
        assertEquals(store.saves, savesBefore, "nothing saved");
    }

    /** The same while the subscription is being deleted. */
    @Test(groups = "unit", timeOut = 30_000)
    public void aResetDuringADeletionAnswersAnError() throws Exception {
        int savesBefore = store.saves;
        engine.deleting(true);
        engine.beginReset();
        CompletableFuture<Void> answer = engine.finishReset(stockResetThatCalls(engine));
        CompletionException e = expectThrows(CompletionException.class, answer::join);
        assertTrue(e.getCause().getMessage().contains("being deleted"), e.getCause().getMessage());
        assertEquals(store.saves, savesBefore, "nothing saved");
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
