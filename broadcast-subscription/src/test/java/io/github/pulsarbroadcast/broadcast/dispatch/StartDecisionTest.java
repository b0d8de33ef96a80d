package io.github.pulsarbroadcast.broadcast.dispatch;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertNull;
import static org.testng.Assert.assertTrue;
import static org.testng.Assert.expectThrows;

import io.github.pulsarbroadcast.broadcast.BroadcastConfig;
import io.github.pulsarbroadcast.broadcast.positions.PositionStore.Loaded;
import io.github.pulsarbroadcast.broadcast.positions.SavedPosition;
import java.util.List;
import java.util.concurrent.CompletionException;
import org.apache.pulsar.broker.service.BrokerServiceException.ServiceUnitNotReadyException;
import org.testng.annotations.Test;

/**
 * When a subscription loaded with saved positions opens the recovery window ({@link StartDecision#decide}), as
 * design.md's "Durable consumer positions" lists it: after a graceful close loaded again within two sync intervals
 * plus {@link StartDecision#STALE_MARGIN_MS} it does not; later (a stale snapshot), after a close that saved no
 * position, after a crash (a periodic save) and with saving switched off it does, restoring what was read.
 *
 * <p>Threading: TestNG's test thread only.
 */
public class StartDecisionTest {

    private static final int SYNC_MS = 5_000;
    private static final BroadcastConfig CONFIG = ModelHarness.config(10, 5, 60, 1000, SYNC_MS);
    private static final long NOW = 1_000_000_000L;
    private static final long STALE_AFTER = 2L * SYNC_MS + StartDecision.STALE_MARGIN_MS;
    private static final List<SavedPosition> POSITIONS = List.of(new SavedPosition("car", 3, 7, new long[0], 0));

    private static SubscriptionStart decide(List<SavedPosition> positions, long ageMillis, boolean onClose) {
        Loaded loaded = new Loaded(positions, null, NOW - ageMillis, onClose);
        return StartDecision.decide(new ModelPositionStore(), loaded, NOW, CONFIG, "[t][s]");
    }

    /**
     * A subscription created anew whose clearing of what an earlier subscription of its name saved fails is refused
     * as not ready, the store left as it is (the broker's retry finds the cursor and loads, which drops them:
     * {@code SubscriptionOfTheSameNameTest}; here the clearing is simply tried again). Regression (a
     * review, forty-fifth session): it started anyway, its first save took the earlier head over, and the head's
     * older creation time made the next owner discard this subscription's own positions as an earlier one's.
     */
    @Test(groups = "unit", timeOut = 10_000)
    public void aNewSubscriptionWhoseClearingFailsIsRefusedAsNotReady() throws Exception {
        ModelPositionStore store = new ModelPositionStore();
        store.save(POSITIONS, null, false).join(); // an earlier subscription's
        store.failNextDiscard = true;
        CompletionException e = expectThrows(CompletionException.class,
                () -> StartDecision.fresh(store, CONFIG, () -> true, "[t][s]").join());
        assertTrue(e.getCause() instanceof ServiceUnitNotReadyException, e.toString());
        assertTrue(e.getCause().getMessage().contains("could not be cleared"), e.getCause().getMessage());
        assertTrue(store.load().join().found(), "left as it was");
        SubscriptionStart start = StartDecision.fresh(store, CONFIG, () -> true, "[t][s]").join();
        assertFalse(start.recovering);
        assertNull(start.restored);
        assertFalse(store.load().join().found(), "cleared by the retry");
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void aGracefulCloseLoadedSoonOpensNoWindow() {
        SubscriptionStart start = decide(POSITIONS, STALE_AFTER, true);
        assertFalse(start.recovering);
        assertEquals(start.restored, POSITIONS);
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void aGracefulCloseLoadedLaterIsRestoredWithTheWindow() {
        SubscriptionStart start = decide(POSITIONS, STALE_AFTER + 1, true);
        assertTrue(start.recovering, "a stale snapshot may miss consumers that joined since");
        assertEquals(start.restored, POSITIONS);
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void aCloseThatSavedNoPositionOpensTheWindow() {
        SubscriptionStart start = decide(List.of(), 1_000, true);
        assertTrue(start.recovering, "read as none saved");
        assertEquals(start.restored, List.of());
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void aCrashOpensTheWindowBesideTheRestoredPositions() {
        SubscriptionStart start = decide(POSITIONS, 1_000, false);
        assertTrue(start.recovering);
        assertEquals(start.restored, POSITIONS);
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void withSavingOffNothingIsReadAndTheWindowOpens() {
        ModelPositionStore store = new ModelPositionStore();
        store.saved = POSITIONS;
        store.savedOnClose = true;
        SubscriptionStart start = StartDecision.resume(store, ModelHarness.config(10, 5, 60, 1000, 0), () -> NOW,
                () -> true, "[t][s]").join();
        assertTrue(start.recovering);
        assertNull(start.restored, "nothing is read");
        assertTrue(store.savedOnClose, "the store was not loaded (a load clears the mark)");
    }
}
