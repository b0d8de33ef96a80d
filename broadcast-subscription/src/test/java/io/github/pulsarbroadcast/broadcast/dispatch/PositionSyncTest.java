package io.github.pulsarbroadcast.broadcast.dispatch;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertTrue;

import io.github.pulsarbroadcast.broadcast.cursor.CursorRules;
import io.github.pulsarbroadcast.broadcast.cursor.VirtualCursor;
import io.github.pulsarbroadcast.broadcast.positions.JoinFloor;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.testng.annotations.BeforeMethod;
import org.testng.annotations.Test;

/**
 * {@link PositionSync}'s periodic save, decided on the dispatch thread and captured on the background executor (the
 * model's queue in {@link ModelHarness}, run when the test says; saves go to a {@link ModelPositionStore}): on every
 * path the outcome reaches the dispatch thread and the next interval saves again (a rejected hand-off at shut-down,
 * an error in the capture, a save skipped while a delete was under way that then failed), a retained position's
 * expiry is saved as of the capture, and no periodic save is captured after the save on close. The cases the review
 * of the change listed (fifteenth session); each failed before its fix.
 *
 * <p>Threading: TestNG's test thread only.
 */
public class PositionSyncTest {

    private static final long SECOND = 1_000_000_000L;
    private static final JoinFloor JOIN_FLOOR = new JoinFloor(5, 40);

    private ModelHarness loop;
    private ModelPositionStore store;
    private PositionSync sync;
    private RetainedCursors cursors;
    /** Whether the subscription's recovery window is open, as the sync reads it. */
    private boolean recovering;

    /** TestNG runs every method on one instance: a fresh world each. */
    @BeforeMethod(alwaysRun = true)
    public void freshWorld() {
        loop = new ModelHarness();
        recovering = false;
        store = new ModelPositionStore();
        sync = new PositionSync(store, 1_000, "[t][s]", loop, () -> loop.nowNanos,
                (closing, wallNow) -> closing && recovering ? new JoinFloor(5, 40, wallNow + 30_000) : JOIN_FLOOR);
        cursors = new RetainedCursors();
    }

    private RetainedCursors withOneRetained(long retainedForNanos) throws Exception {
        CursorRules rules = new CursorRules(p -> PositionImpl.get(p.getLedgerId(), p.getEntryId() + 1), 100);
        BroadcastConsumer bc = cursors.attach("car-a", () -> new VirtualCursor(PositionImpl.get(5, 42), rules),
                (cursor, resumed) -> new BroadcastConsumer(null, 1, "car-a", null, cursor, false, 0, resumed));
        cursors.detach(bc, true, loop.nowNanos + retainedForNanos);
        return cursors;
    }

    /** One sync's turn at the model's time, then everything it handed off. */
    private void syncTurn() {
        sync.maybeSave(cursors, loop.nowNanos);
        loop.runAll();
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void aSaveIsCapturedInTheBackgroundAndTheNextOneWaitsForItsOutcome() throws Exception {
        withOneRetained(60 * SECOND);
        sync.changed();
        sync.maybeSave(cursors, loop.nowNanos);
        assertEquals(store.saves, 0, "not on the dispatch thread");
        assertEquals(loop.backgroundQueued(), 1);
        sync.changed();
        loop.advance(2_000);
        sync.maybeSave(cursors, loop.nowNanos);
        assertEquals(loop.backgroundQueued(), 1, "one save at a time");
        loop.runAll();
        assertEquals(store.saves, 1);
        syncTurn();
        assertEquals(store.saves, 2, "the change made meanwhile is saved at the next turn");
    }

    /** design.md, "Durable consumer positions": a save is made when something changed, never on the clock alone. */
    @Test(groups = "unit", timeOut = 10_000)
    public void nothingIsSavedWhileNothingChanges() throws Exception {
        withOneRetained(60 * SECOND);
        sync.changed();
        syncTurn();
        assertEquals(store.saves, 1);
        for (int i = 0; i < 3; i++) {
            loop.advance(2_000);
            syncTurn();
        }
        assertEquals(store.saves, 1, "three intervals without a change: no save");
        sync.changed();
        loop.advance(2_000);
        syncTurn();
        assertEquals(store.saves, 2, "the next change is saved at the next interval");
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void aRejectedHandOffLeavesTheNextIntervalToSave() throws Exception {
        withOneRetained(60 * SECOND);
        sync.changed();
        loop.refusingBackground = true;
        syncTurn();
        assertEquals(store.saves, 0);
        loop.refusingBackground = false;
        loop.advance(2_000);
        syncTurn();
        assertEquals(store.saves, 1, "saving was not left set, and the change not forgotten");
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void anErrorInTheCaptureReachesTheDispatchThreadAndSavingGoesOn() throws Exception {
        withOneRetained(60 * SECOND);
        sync.changed();
        store.failNextSave = new OutOfMemoryError("simulated");
        syncTurn();
        assertEquals(store.saves, 0);
        loop.advance(2_000);
        syncTurn();
        assertEquals(store.saves, 1, "the failed save is retried at the next interval");
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void aSaveSkippedWhileADeleteWasUnderWayIsMadeWhenTheDeleteFails() throws Exception {
        withOneRetained(60 * SECOND);
        sync.changed();
        sync.maybeSave(cursors, loop.nowNanos);
        sync.stop(true);
        loop.runAll();
        assertEquals(store.saves, 0, "nothing captured while the subscription is being deleted");
        sync.stop(false);
        loop.advance(2_000);
        syncTurn();
        assertEquals(store.saves, 1, "the delete failed: what the skipped save was for is saved");
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void aRetainedPositionIsSavedWithItsExpiryAsOfTheCapture() throws Exception {
        withOneRetained(60 * SECOND);
        sync.changed();
        sync.maybeSave(cursors, loop.nowNanos);
        loop.advance(30_000); // the capture runs 30 s after the decision, on both clocks
        loop.runAll();
        long remainingMs = store.retainedUntilMillis("car-a") - loop.wallMillis();
        assertTrue(remainingMs <= 31_000 && remainingMs >= 29_000, "30 s left, saved " + remainingMs + " ms");
        assertEquals(store.joinFloor, JOIN_FLOOR, "the save carries the join floor read at its capture");
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void noPeriodicSaveIsCapturedAfterTheSaveOnClose() throws Exception {
        withOneRetained(60 * SECOND);
        sync.changed();
        sync.maybeSave(cursors, loop.nowNanos);
        sync.saveNow(cursors, loop.nowNanos, true);
        loop.runAll();
        assertEquals(store.saves, 1);
        assertTrue(store.savedOnClose, "the close save is the last one");
        sync.reopen();
        loop.advance(2_000);
        syncTurn();
        assertEquals(store.saves, 2, "saving resumes after a reopen");
        assertFalse(store.savedOnClose);
    }

    /**
     * Regression (twenty-ninth session): a save on close inside the recovery window carried nothing of it, so the next
     * owner opened no window, and a consumer that had joined the crashed owner after its last save (a name this
     * subscription never knew) came back at the tail and lost what it had not acknowledged. The save on close now
     * asks for the floor of a closing save, which carries the window's end ({@link RecoveryWindowTest}).
     */
    @Test(groups = "unit", timeOut = 10_000)
    public void aSaveOnCloseInsideTheRecoveryWindowCarriesItsEnd() throws Exception {
        withOneRetained(60 * SECOND);
        recovering = true;
        sync.changed();
        syncTurn();
        assertEquals(store.joinFloor, JOIN_FLOOR, "a periodic save carries no window end");
        sync.saveNow(cursors, loop.nowNanos, true);
        loop.runAll();
        assertTrue(store.savedOnClose);
        assertEquals(store.joinFloor.windowEndMillis(), loop.wallMillis() + 30_000, "the window's end");
    }
}
