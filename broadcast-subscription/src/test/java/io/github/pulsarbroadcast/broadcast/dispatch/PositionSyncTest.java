package io.github.pulsarbroadcast.broadcast.dispatch;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertTrue;

import io.github.pulsarbroadcast.broadcast.cursor.CursorRules;
import io.github.pulsarbroadcast.broadcast.cursor.VirtualCursor;
import io.github.pulsarbroadcast.broadcast.positions.PositionStore;
import io.github.pulsarbroadcast.broadcast.positions.SavedPosition;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.testng.annotations.BeforeMethod;
import org.testng.annotations.Test;

/**
 * {@link PositionSync}'s periodic save, decided on the dispatch thread and captured on the background executor (a
 * queue here, run when the test says): on every path the outcome reaches the dispatch thread and the next interval
 * saves again (a rejected hand-off at shut-down, an error in the capture, a save skipped while a delete was under way
 * that then failed), a retained position's expiry is saved as of the capture, and no periodic save is captured after
 * the save on close. The cases the review of the change listed (fifteenth session); each failed before its fix.
 *
 * <p>Threading: TestNG's test thread only.
 */
public class PositionSyncTest {

    private static final long SECOND = 1_000_000_000L;

    /** A dispatch loop whose tasks and background work wait in queues; the background may refuse work. */
    private static final class Loop implements DispatchLoop {
        final ArrayDeque<Runnable> tasks = new ArrayDeque<>();
        final ArrayDeque<Runnable> background = new ArrayDeque<>();
        boolean rejecting;
        long wallMillis = 1_700_000_000_000L;

        @Override
        public void post(Runnable task) {
            tasks.add(task);
        }

        @Override
        public void schedule(Runnable task, long delayMs) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Executor background() {
            return r -> {
                if (rejecting) {
                    throw new RejectedExecutionException("shut down");
                }
                background.add(r);
            };
        }

        @Override
        public long wallMillis() {
            return wallMillis;
        }

        void runAll() {
            while (!background.isEmpty() || !tasks.isEmpty()) {
                Runnable r = background.isEmpty() ? tasks.poll() : background.poll();
                r.run();
            }
        }
    }

    /** Records saves; the next capture may throw. */
    private static final class Store implements PositionStore {
        int saves;
        List<SavedPosition> last;
        boolean lastOnClose;
        Error failNext;

        @Override
        public CompletableFuture<Loaded> load() {
            return CompletableFuture.completedFuture(new Loaded(null, null, 0, false));
        }

        @Override
        public CompletableFuture<Void> discard() {
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public CompletableFuture<Void> save(List<SavedPosition> positions, boolean onClose) {
            if (failNext != null) {
                Error e = failNext;
                failNext = null;
                throw e;
            }
            saves++;
            last = positions;
            lastOnClose = onClose;
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public CompletableFuture<Void> delete() {
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public boolean isFenced() {
            return false;
        }
    }

    private Loop loop;
    private Store store;
    private long nowNanos;
    private PositionSync sync;
    private RetainedCursors cursors;

    /** TestNG runs every method on one instance: a fresh world each. */
    @BeforeMethod(alwaysRun = true)
    public void freshWorld() {
        loop = new Loop();
        store = new Store();
        nowNanos = 1_000 * SECOND;
        sync = new PositionSync(store, 1_000, "[t][s]", loop, () -> nowNanos);
        cursors = new RetainedCursors();
    }

    private RetainedCursors withOneRetained(long retainedForNanos) throws Exception {
        CursorRules rules = new CursorRules(p -> PositionImpl.get(p.getLedgerId(), p.getEntryId() + 1), 100);
        BroadcastConsumer bc = cursors.attach("car-a", () -> new VirtualCursor(PositionImpl.get(5, 42), rules),
                (cursor, resumed) -> new BroadcastConsumer(null, 1, "car-a", null, cursor, false, 0, resumed));
        cursors.detach(bc, true, nowNanos + retainedForNanos);
        return cursors;
    }

    /** One sync's turn at {@code nowNanos}, then everything it handed off. */
    private void syncTurn() {
        sync.maybeSave(cursors, nowNanos);
        loop.runAll();
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void aSaveIsCapturedInTheBackgroundAndTheNextOneWaitsForItsOutcome() throws Exception {
        withOneRetained(60 * SECOND);
        sync.changed();
        sync.maybeSave(cursors, nowNanos);
        assertEquals(store.saves, 0, "not on the dispatch thread");
        assertEquals(loop.background.size(), 1);
        sync.changed();
        nowNanos += 2 * SECOND;
        sync.maybeSave(cursors, nowNanos);
        assertEquals(loop.background.size(), 1, "one save at a time");
        loop.runAll();
        assertEquals(store.saves, 1);
        syncTurn();
        assertEquals(store.saves, 2, "the change made meanwhile is saved at the next turn");
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void aRejectedHandOffLeavesTheNextIntervalToSave() throws Exception {
        withOneRetained(60 * SECOND);
        sync.changed();
        loop.rejecting = true;
        syncTurn();
        assertEquals(store.saves, 0);
        loop.rejecting = false;
        nowNanos += 2 * SECOND;
        syncTurn();
        assertEquals(store.saves, 1, "saving was not left set, and the change not forgotten");
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void anErrorInTheCaptureReachesTheDispatchThreadAndSavingGoesOn() throws Exception {
        withOneRetained(60 * SECOND);
        sync.changed();
        store.failNext = new OutOfMemoryError("simulated");
        syncTurn();
        assertEquals(store.saves, 0);
        nowNanos += 2 * SECOND;
        syncTurn();
        assertEquals(store.saves, 1, "the failed save is retried at the next interval");
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void aSaveSkippedWhileADeleteWasUnderWayIsMadeWhenTheDeleteFails() throws Exception {
        withOneRetained(60 * SECOND);
        sync.changed();
        sync.maybeSave(cursors, nowNanos);
        sync.stop(true);
        loop.runAll();
        assertEquals(store.saves, 0, "nothing captured while the subscription is being deleted");
        sync.stop(false);
        nowNanos += 2 * SECOND;
        syncTurn();
        assertEquals(store.saves, 1, "the delete failed: what the skipped save was for is saved");
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void aRetainedPositionIsSavedWithItsExpiryAsOfTheCapture() throws Exception {
        withOneRetained(60 * SECOND);
        sync.changed();
        sync.maybeSave(cursors, nowNanos);
        // The capture runs 30 s after the decision, on both clocks.
        nowNanos += 30 * SECOND;
        loop.wallMillis += 30_000;
        loop.runAll();
        long remainingMs = store.last.get(0).retainedUntilMillis() - loop.wallMillis;
        assertTrue(remainingMs <= 31_000 && remainingMs >= 29_000, "30 s left, saved " + remainingMs + " ms");
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void noPeriodicSaveIsCapturedAfterTheSaveOnClose() throws Exception {
        withOneRetained(60 * SECOND);
        sync.changed();
        sync.maybeSave(cursors, nowNanos);
        sync.saveNow(cursors, nowNanos, true);
        loop.runAll();
        assertEquals(store.saves, 1);
        assertTrue(store.lastOnClose, "the close save is the last one");
        sync.reopen();
        nowNanos += 2 * SECOND;
        syncTurn();
        assertEquals(store.saves, 2, "saving resumes after a reopen");
        assertFalse(store.lastOnClose);
    }
}
