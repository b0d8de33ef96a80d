package io.github.pulsarbroadcast.broadcast.dispatch;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertTrue;
import static org.testng.Assert.expectThrows;

import io.github.pulsarbroadcast.broadcast.BroadcastConfig;
import io.github.pulsarbroadcast.broadcast.WindowBudget;
import io.github.pulsarbroadcast.broadcast.positions.JoinFloor;
import io.github.pulsarbroadcast.broadcast.positions.SavedPosition;
import java.util.List;
import java.util.concurrent.CompletionException;
import org.apache.pulsar.broker.service.BrokerServiceException.ServiceUnitNotReadyException;
import org.apache.pulsar.broker.service.BrokerServiceException.SubscriptionFencedException;
import org.apache.pulsar.broker.service.BrokerServiceException.TopicFencedException;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.testng.annotations.Test;

/**
 * What the position store holds after a failed load and after a subscription reopened after a failed close (the
 * dispatch model test found both, thirtieth session, once its loads could fail and its graceful closes could fail
 * half-way; the first was changed in the forty-second session: a failed load now refuses the subscribe and leaves the
 * store as it is). After a reopen, a crash of this broker before its next periodic save must leave the next owner
 * opening the recovery window. The model's seeds 1314848850539540 and 759256962765227 ({@link DispatchModelTest})
 * are the same cases in random schedules.
 *
 * <p>Threading: TestNG's test thread only.
 */
public class StartAfterFailureTest {

    private static final BroadcastConfig CONFIG = ModelHarness.config(10, 5, 60, 1000, 1000);

    /**
     * A load that failed refuses the installation as not ready (the client retries), with the previous owner's
     * snapshot left as it is, so that the retry restores it. Regression (forty-second session, a review): the
     * subscription started without positions and the snapshot was replaced by an empty one (the thirtieth session's
     * fix, so that a crash here did not bring the previous owner's snapshot back): a consumer away for longer than
     * the recovery window lost its backlog for good. The model's reloads (one load in four fails) retry the same way.
     */
    @Test(groups = "unit", timeOut = 10_000)
    public void aFailedLoadRefusesTheSubscribeAndLeavesTheSnapshotForTheRetry() {
        ModelHarness world = new ModelHarness();
        ModelPositionStore store = previousOwnersCloseSave(world);
        store.failNextLoad = true;

        CompletionException refused = expectThrows(CompletionException.class,
                () -> StartDecision.resume(store, CONFIG, world::wallMillis, () -> true, "[t][s]").join());

        assertTrue(refused.getCause() instanceof ServiceUnitNotReadyException, refused.toString());
        assertTrue(refused.getCause().getMessage().contains("retry"), refused.getCause().getMessage());
        assertEquals(store.saves, 1, "nothing written");
        assertTrue(store.savedOnClose, "the store is as it was");
        SubscriptionStart retry = StartDecision.resume(store, CONFIG, world::wallMillis, () -> true, "[t][s]")
                .join();
        assertEquals(retry.restored.size(), 1, "the retry restores the snapshot");
        assertEquals(retry.restored.get(0).name(), "car-a");
        assertEquals(retry.restored.get(0).ackedEntry(), 7);
        assertFalse(retry.recovering, "a save made on close: no window");
    }

    /** A failed load of a topic this broker no longer serves: the subscribe fails as the topic closing. */
    @Test(groups = "unit", timeOut = 10_000)
    public void aFailedLoadOfATopicNoLongerServedHereReplacesNothing() {
        ModelHarness world = new ModelHarness();
        ModelPositionStore store = previousOwnersCloseSave(world);
        store.failNextLoad = true;

        CompletionException refused = expectThrows(CompletionException.class,
                () -> StartDecision.resume(store, CONFIG, world::wallMillis, () -> false, "[t][s]").join());

        assertTrue(refused.getCause() instanceof TopicFencedException, refused.toString());
        assertEquals(store.saves, 1, "nothing written");
    }

    private static ModelPositionStore previousOwnersCloseSave(ModelHarness world) {
        ModelPositionStore store = new ModelPositionStore(world::wallMillis);
        store.save(List.of(new SavedPosition("car-a", 3, 7, new long[0], 0)), new JoinFloor(5, 40), true);
        return store;
    }

    /**
     * Regression: a subscription reopened after a close that failed half-way (stock {@code resumeAfterFence}) left
     * the store saying its positions were saved on close until the next periodic save; a crash in between opened no
     * recovery window, and a consumer that joined after the reopen came back at the tail.
     */
    @Test(groups = "unit", timeOut = 10_000)
    public void aSubscriptionReopenedAfterAFailedCloseSavesAtOnceNotOnClose() throws Exception {
        ModelHarness world = new ModelHarness();
        ModelPositionStore store = new ModelPositionStore(world::wallMillis);
        SubscriptionEngine engine = closedAfterCarAJoined(world, store);

        engine.reopen();

        assertEquals(store.saves, 2, "saved at once");
        assertFalse(store.savedOnClose);
        assertTrue(StartDecision.decide(store, store.load().join(), world.wallMillis(), CONFIG, "[t][s]")
                .recovering, "a crash before the next periodic save opens the next owner's window");
    }

    /**
     * The same, when the reopen's own save fails (the metadata store did not answer): the store still says saved on
     * close, so a consumer new to the subscription is refused until a save works; one that left at the close resumes
     * (regression, forty-fourth session, found by the dispatch model once saves could fail: seed 20261207788097, the
     * new consumer came back after a crash at the tail).
     */
    @Test(groups = "unit", timeOut = 10_000)
    public void aReopenWhoseSaveFailsRefusesNewNamesUntilASaveWorks() throws Exception {
        ModelHarness world = new ModelHarness();
        ModelPositionStore store = new ModelPositionStore(world::wallMillis);
        SubscriptionEngine engine = closedAfterCarAJoined(world, store);
        store.nextSaveFails = true;

        engine.reopen();

        assertTrue(store.savedOnClose, "the reopen's save failed");
        SubscriptionFencedException refused = expectThrows(SubscriptionFencedException.class,
                () -> engine.join(2, "car-b", ModelHarness.discarding(), InitialPosition.Latest, 0));
        assertTrue(refused.getMessage().contains("car-b (new to it) is refused until a save works"),
                refused.getMessage());
        BroadcastConsumer back = engine.join(3, "car-a", ModelHarness.discarding(), InitialPosition.Latest, 0);
        assertTrue(back.resumed, "a name the save on close holds resumes");
        world.advance(60_000); // past the sync interval: the next sync saves (the reopen left it to do)
        engine.sync();
        world.runAll();
        assertFalse(store.savedOnClose, "a periodic save worked");
        assertTrue(engine.join(4, "car-b", ModelHarness.discarding(), InitialPosition.Latest, 0) != null,
                "accepted once a save worked");
    }

    /**
     * A save captured before the reopen and completing after it (a slow metadata store: the periodic save in flight
     * when the close came) must not let new names in: the save on close may still land after it (found by a review of
     * the fix above, forty-fourth session: the first version cleared a flag on any save that worked).
     */
    @Test(groups = "unit", timeOut = 10_000)
    public void aSaveCapturedBeforeTheReopenDoesNotLetNewNamesIn() throws Exception {
        ModelHarness world = new ModelHarness();
        ModelPositionStore store = new ModelPositionStore(world::wallMillis);
        SubscriptionEngine engine = new SubscriptionEngine("persistent://t/ns/reopen", "fleet", -1,
                new ModelLedger(3, 5), CONFIG, WindowBudget.unlimited(), world, () -> world.nowNanos,
                new SubscriptionStart(store, null, false));
        BroadcastConsumer car = engine.join(1, "car-a", ModelHarness.discarding(), InitialPosition.Earliest, 0);
        store.holdSaves = true;
        world.advance(60_000);
        engine.sync();
        world.runAll(); // the periodic save: captured, held
        engine.close(); // the save on close: held behind it
        engine.leave(car);
        engine.reopen(); // the reopen's save: held behind both
        assertEquals(store.heldSaves.size(), 3);

        store.heldSaves.get(0).run(); // the periodic save, captured before the reopen, works
        world.runAll();
        expectThrows(SubscriptionFencedException.class,
                () -> engine.join(2, "car-b", ModelHarness.discarding(), InitialPosition.Latest, 0));
        store.heldSaves.get(1).run(); // the save on close lands
        store.heldSaves.get(2).run(); // then the reopen's
        world.runAll();
        assertFalse(store.savedOnClose);
        assertTrue(engine.join(3, "car-b", ModelHarness.discarding(), InitialPosition.Latest, 0) != null);
    }

    /** A subscription car-a joined, closed (its save on close made) with car-a gone: ready to reopen. */
    private static SubscriptionEngine closedAfterCarAJoined(ModelHarness world, ModelPositionStore store)
            throws Exception {
        SubscriptionEngine engine = new SubscriptionEngine("persistent://t/ns/reopen", "fleet", -1,
                new ModelLedger(3, 5), CONFIG, WindowBudget.unlimited(), world, () -> world.nowNanos,
                new SubscriptionStart(store, null, false));
        BroadcastConsumer car = engine.join(1, "car-a", ModelHarness.discarding(), InitialPosition.Earliest, 0);
        engine.close().join();
        engine.leave(car);
        assertTrue(store.savedOnClose);
        return engine;
    }
}
