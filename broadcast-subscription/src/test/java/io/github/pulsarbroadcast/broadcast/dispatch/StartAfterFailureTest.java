package io.github.pulsarbroadcast.broadcast.dispatch;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertNull;
import static org.testng.Assert.assertTrue;
import static org.testng.Assert.expectThrows;

import io.github.pulsarbroadcast.broadcast.BroadcastConfig;
import io.github.pulsarbroadcast.broadcast.WindowBudget;
import io.github.pulsarbroadcast.broadcast.positions.JoinFloor;
import io.github.pulsarbroadcast.broadcast.positions.SavedPosition;
import java.util.List;
import java.util.concurrent.CompletionException;
import org.apache.pulsar.broker.service.BrokerServiceException.ServiceUnitNotReadyException;
import org.apache.pulsar.broker.service.BrokerServiceException.TopicFencedException;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.testng.annotations.Test;

/**
 * What the position store holds after the two failures the dispatch model test found left it saying the wrong thing
 * (thirtieth session, once the model's loads could fail and its graceful closes could fail half-way): a start after a
 * failed load, and a subscription reopened after a failed close. In both cases a crash of this broker before its next
 * periodic save must leave the next owner opening the recovery window from where this broker's own window starts.
 * The model's seeds 1314848850539540 and 759256962765227 ({@link DispatchModelTest}) are the same cases in random
 * schedules.
 *
 * <p>Threading: TestNG's test thread only.
 */
public class StartAfterFailureTest {

    private static final BroadcastConfig CONFIG = ModelHarness.config(10, 5, 60, 1000, 1000);

    /**
     * Regression: after a failed load the subscription started with its window at the mark-delete position, but the
     * store still held the previous owner's snapshot until the first periodic save, with its "saved on close" mark
     * (a crash then opened no window at all) and its join floor (a consumer that joined here below that floor came
     * back after a crash at the floor, past what it had been sent). Now the store holds no positions and no floor,
     * not saved on close, before the subscription starts.
     */
    @Test(groups = "unit", timeOut = 10_000)
    public void aFailedLoadReplacesThePreviousOwnersSnapshotBeforeTheSubscriptionStarts() {
        ModelHarness world = new ModelHarness();
        ModelPositionStore store = previousOwnersCloseSave(world);
        store.failNextLoad = true;

        SubscriptionStart start = StartDecision.resume(store, CONFIG, world::wallMillis, () -> true, "[t][s]")
                .join();

        assertTrue(start.recovering, "no positions read: the recovery window opens");
        assertNull(start.restored);
        assertNull(start.joinFloor, "the window starts at the mark-delete position");
        assertEquals(store.saved, List.of(), "the previous owner's snapshot is replaced");
        assertNull(store.joinFloor, "and its join floor with it");
        assertFalse(store.savedOnClose);
        SubscriptionStart afterCrash = StartDecision.decide(store, store.load().join(), null, world.wallMillis(),
                CONFIG, "[t][s]");
        assertTrue(afterCrash.recovering, "a crash here opens the next owner's window");
        assertNull(afterCrash.joinFloor, "from the mark-delete position, as here");
    }

    /**
     * A review of the fix above (thirtieth session): when the replacement fails too (the metadata store that failed
     * the load may still be failing), a subscription that started anyway would leave the previous owner's snapshot in
     * place; the subscribe is refused instead (the client retries it), and nothing of the store changes.
     */
    @Test(groups = "unit", timeOut = 10_000)
    public void aFailedLoadWhoseReplacementFailsTooRefusesTheSubscribe() {
        ModelHarness world = new ModelHarness();
        ModelPositionStore store = previousOwnersCloseSave(world);
        store.failNextLoad = true;
        store.failNextSaveLater = new IllegalStateException("simulated: the metadata store did not answer");

        CompletionException refused = expectThrows(CompletionException.class,
                () -> StartDecision.resume(store, CONFIG, world::wallMillis, () -> true, "[t][s]").join());

        assertTrue(refused.getCause() instanceof ServiceUnitNotReadyException, refused.toString());
        assertTrue(refused.getCause().getMessage().contains("retry"), refused.getCause().getMessage());
        assertTrue(store.savedOnClose, "the store is as it was");
        assertEquals(store.saves, 1);
    }

    /** A review (thirtieth session): no replacement for a topic this broker no longer serves; the subscribe fails. */
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
        SubscriptionEngine engine = new SubscriptionEngine("persistent://t/ns/reopen", "fleet", -1,
                new ModelLedger(3, 5), CONFIG, WindowBudget.unlimited(), world, () -> world.nowNanos,
                new SubscriptionStart(store, null, false));
        BroadcastConsumer car = engine.join(1, "car-a", ModelHarness.discarding(), InitialPosition.Earliest, 0);
        engine.close().join();
        engine.leave(car);
        assertTrue(store.savedOnClose);

        engine.reopen();

        assertEquals(store.saves, 2, "saved at once");
        assertFalse(store.savedOnClose);
        assertTrue(StartDecision.decide(store, store.load().join(), null, world.wallMillis(), CONFIG, "[t][s]")
                .recovering, "a crash before the next periodic save opens the next owner's window");
    }
}
