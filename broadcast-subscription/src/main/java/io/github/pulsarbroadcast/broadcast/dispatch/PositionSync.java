package io.github.pulsarbroadcast.broadcast.dispatch;

import io.github.pulsarbroadcast.broadcast.positions.JoinFloor;
import io.github.pulsarbroadcast.broadcast.positions.PositionStore;
import io.github.pulsarbroadcast.broadcast.positions.SavedPosition;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Saves a subscription's consumer positions ({@link RetainedCursors#save}) to its {@link PositionStore}: from the
 * periodic sync at most once per {@code broadcastPositionSyncIntervalMs} and only when something changed (an ack
 * moved a position, a consumer joined, left or expired, a position was moved forward), never per join or per ack;
 * and once more when the subscription closes (a topic move or broker shut-down), so a graceful move loses nothing of
 * what was acknowledged. One save is in flight at a time; a failed one is retried at the next interval.
 *
 * <p>Threading: {@link #changed}, {@link #stopped} and {@link #abandoned} are volatile (any writer); {@link
 * #lastSaveNanos}, {@link #saving} and {@link #failuresLogged} are confined to the dispatch thread. A periodic save is
 * decided on the dispatch thread and captured on the loop's background executor, at most one at a time ({@link #saving}
 * stays set until its outcome is posted back); saves on close and reset are captured on the caller's thread. Capturing
 * a snapshot and handing it to the store happen together under this object's monitor ({@link #capture}), with {@link
 * #closing}: the store applies saves in the order they were handed over, so that order must be the order of capture, or
 * an older snapshot (a periodic one captured just before the close) could land after a newer one.
 */
final class PositionSync {

    private static final Logger log = LoggerFactory.getLogger(PositionSync.class);

    /** The join floor of a capture ({@link RecoveryWindow#joinFloor(boolean, long)}). Called under the capture. */
    interface Floors {
        JoinFloor floor(boolean closing, long wallNowMillis);
    }
    /**
     * Individually acknowledged ranges saved per snapshot, over all its consumers: 5-9 bytes each in the snapshot
     * (SnapshotCodec), so at most about 9 MB of ranges per save whatever the number of consumers.
     */
    static final int MAX_SAVED_RANGES = 1_000_000;

    private final PositionStore store;
    private final long intervalNanos;
    private final String name;
    private final DispatchLoop loop;
    private final LongSupplier nanoClock;
    /** The join floor of a capture made now ({@link RecoveryWindow#joinFloor}); read just before each capture. */
    private final Floors joinFloor;
    private volatile boolean changed;
    private volatile boolean stopped;
    /** Set for good when the topic left this broker without closing the subscription ({@link #abandon}). */
    private volatile boolean abandoned;
    /**
     * The number of the {@link #markStale} after which no save has worked yet, or 0: until one captured after it
     * works, the store may hold a snapshot that would start a consumer new to this subscription meanwhile past what it
     * was sent, after a crash ({@link ConsumerJoins} refuses such consumers meanwhile): after a {@link #reopen}, the
     * save on close, which tells the next owner that it knows every consumer (such a consumer would come back at the
     * tail); after a reset ({@link #positionsRestarted}), a join floor from before the reset, above where the reset
     * starts new names (found by the dispatch model, forty-fifth session: seed 20261211795669). A number, not a flag:
     * a save captured before the mark and completing after it must not clear it (a review). Set under this object's
     * monitor, cleared by the completion of a save captured after it (compare-and-set, any thread).
     */
    private final AtomicLong staleSince = new AtomicLong();
    /** Marks so far. Guarded by {@code this}. */
    private long staleMarks;
    /** Set by the save on close: no periodic save may be captured after it. Guarded by {@code this}. */
    private boolean closing;
    /** Whether the last capture dropped ranges. Guarded by {@code this}. */
    private boolean droppingRanges;
    private long lastSaveNanos;
    private boolean saving;
    private int failuresLogged;

    PositionSync(PositionStore store, long intervalMs, String name, DispatchLoop loop, LongSupplier nanoClock,
                 Floors joinFloor) {
        this.loop = loop;
        this.joinFloor = joinFloor;
        this.nanoClock = nanoClock;
        this.store = store;
        this.intervalNanos = intervalMs * 1_000_000;
        this.name = name;
    }

    /** Whether positions are saved at all ({@code broadcastPositionSyncIntervalMs} greater than 0). */
    boolean enabled() {
        return intervalNanos > 0;
    }

    /** Something a save would record changed; any thread. */
    void changed() {
        if (!changed) {
            changed = true;
        }
    }

    /**
     * Saves if something changed and the interval has passed since the last save (dispatch thread). The capture and
     * its encoding run on the loop's {@link DispatchLoop#background} executor, not on the dispatch thread (they took
     * 30-70 ms per save there at 100,000 consumers, and syncs with a save 100-400 ms in the first half minute after a
     * connect storm, while every fan-out pass waited); the outcome comes back to the dispatch thread.
     */
    void maybeSave(RetainedCursors cursors, long nowNanos) {
        if (!changed || saving || stopped || abandoned || !enabled() || nowNanos - lastSaveNanos < intervalNanos
                || store.isFenced()) {
            return;
        }
        changed = false;
        lastSaveNanos = nowNanos;
        saving = true;
        try {
            loop.background().execute(() -> saveInBackground(cursors));
        } catch (RejectedExecutionException e) {
            // The plugin is shutting down (each subscription's save on close covers it): left to the next interval.
            saving = false;
            changed = true;
        }
    }

    /**
     * A periodic save on the background executor: capture (with the clock read now, so that a retained position's
     * expiry is saved as of the capture), hand over, and report the outcome to the dispatch thread on every path,
     * or no periodic save would follow.
     */
    private void saveInBackground(RetainedCursors cursors) {
        CompletableFuture<Void> saved;
        try {
            // Stopped meanwhile (the subscription is being deleted, or a crash is simulated): nothing more is saved.
            saved = stopped || abandoned ? null : capture(cursors, nanoClock.getAsLong(), false);
        } catch (Throwable t) {
            loop.post(() -> saved(t));
            return;
        }
        if (saved == null) {
            loop.post(this::notCaptured);
        } else {
            saved.whenComplete((v, e) -> loop.post(() -> saved(e)));
        }
    }

    /**
     * A periodic save found the subscription stopped or already closed (dispatch thread): what it was for stays to
     * be saved, should saving resume (a delete that failed: {@link #stop} with false).
     */
    private void notCaptured() {
        saving = false;
        changed = true;
    }

    /** Captures and hands over one snapshot, unless the close save was captured already; {@code last}: it is. */
    private synchronized CompletableFuture<Void> capture(RetainedCursors cursors, long nowNanos, boolean last) {
        if (closing || abandoned) {
            return null;
        }
        closing = last;
        // Read before the capture: a consumer that joins after the capture (so is missing from it) starts at or
        // above this floor, which the next owner uses for names it does not know after a crash.
        // The save on close made inside a recovery window carries the window's end, and the next owner keeps the
        // window until then: names this subscription does not know may be consumers whose positions no save holds
        // (it was loaded after a crash, or without readable positions). Regression (twenty-ninth session): a move
        // inside the window ended it, and such a consumer came back at the tail, losing what it had not acknowledged.
        JoinFloor floor = joinFloor.floor(last, loop.wallMillis());
        int[] dropped = new int[1];
        List<SavedPosition> positions = cursors.save(nowNanos, loop.wallMillis(), MAX_SAVED_RANGES, dropped);
        noteDroppedRanges(dropped[0]);
        CompletableFuture<Void> saved = store.save(positions, floor, last);
        long mark = staleSince.get();
        if (mark != 0 && !last) {
            // Captured after that mark: once it works, new names are safe again; cleared before the save's callers
            // hear of it, so that a reset whose save works answers with no refusal left (a review).
            return saved.whenComplete((v, e) -> {
                if (e == null) {
                    staleSince.compareAndSet(mark, 0);
                }
            });
        }
        return saved;
    }

    /**
     * A WARN when a save drops ranges after one that dropped none (every such save when DEBUG is on), so that a
     * subscription over the budget does not log every interval.
     */
    private void noteDroppedRanges(int dropped) {
        if (dropped > 0 && (!droppingRanges || log.isDebugEnabled())) {
            log.warn("{} Saved {} consumer positions without their individually acknowledged ranges: more than {}"
                    + " ranges in all; after the topic's next load (a move, restart or crash) those consumers may get"
                    + " again what they acknowledged out of order (duplicates, never loss)", name, dropped,
                    MAX_SAVED_RANGES);
        }
        droppingRanges = dropped > 0;
    }

    /** The subscription works again after a failed close: periodic saves resume. */
    synchronized void reopen() {
        closing = false;
        changed = true;
        markStale();
    }

    /**
     * A reset restarted every position below the join floor the store may hold: until a save captured after this
     * works, consumers new to the subscription are refused ({@link #staleSince}). Call after the positions were
     * restarted and the recovery window opened at the reset position, before the reset's own save.
     */
    synchronized void positionsRestarted() {
        markStale();
    }

    private void markStale() {
        staleSince.set(enabled() ? ++staleMarks : 0);
    }

    /**
     * See {@link #staleSince}; false when no save could land anyway (abandoned, or another broker fenced the store):
     * the refusal would protect nothing there.
     */
    boolean newNamesUnsafe() {
        return staleSince.get() != 0 && !abandoned && !store.isFenced();
    }

    private void saved(Throwable e) {
        saving = false;
        if (e == null) {
            failuresLogged = 0;
            return;
        }
        changed = true;
        Throwable cause = org.apache.pulsar.common.util.FutureUtil.unwrapCompletionException(e);
        if (cause instanceof PositionStore.NotSaved) {
            // No save lands here any more (fenced or deleted meanwhile): none is tried again (maybeSave).
            log.info("{} Consumer positions are no longer saved on this broker: {}", name, cause.getMessage());
        } else if (failuresLogged++ == 0 || log.isDebugEnabled()) {
            log.warn("{} Saving consumer positions failed (retried every interval; logged again when it has"
                    + " worked once): {}", name, e.toString());
        }
    }

    /**
     * Saves the positions as they are now, whatever the interval; any thread. {@code closing}: the subscription
     * closes, and this is the last save (until {@link #reopen}). A failed save is retried by the next periodic one.
     */
    CompletableFuture<Void> saveNow(RetainedCursors cursors, long nowNanos, boolean closing) {
        if (!enabled()) {
            return CompletableFuture.completedFuture(null); // positions are not kept across restarts (configured)
        }
        if (stopped || abandoned || store.isFenced()) {
            // Nothing can be saved here any more. A save on close has nothing to do; any other fails, so that a reset
            // does not answer success with positions no store holds (left by the forty-fourth note).
            return closing ? CompletableFuture.completedFuture(null) : CompletableFuture.failedFuture(
                    new PositionStore.NotSaved(stopped ? DELETING : abandoned
                            ? "the topic left this broker: the positions can no longer be saved here"
                            : "the saved positions can no longer be written here (another broker took them over, or"
                                    + " they were deleted)"));
        }
        CompletableFuture<Void> saved;
        try {
            saved = capture(cursors, nowNanos, closing);
        } catch (RuntimeException e) {
            // As a save that failed: its callers (a close, a reset's answer) must hear of it, not be thrown at.
            changed = true;
            return CompletableFuture.failedFuture(e);
        }
        if (saved == null) {
            // Not captured: the save on close was (again, or by a close that overtook this save). A save that is not
            // the close's fails then, so that a reset does not answer success with the positions from before it
            // in the store (a review: the engine's own closed check can be raced).
            return closing ? CompletableFuture.completedFuture(null) : CompletableFuture.failedFuture(
                    new IllegalStateException("the subscription closed meanwhile: its save on close holds the"
                            + " positions from before this save"));
        }
        return saved.whenComplete((v, e) -> {
            if (e != null) {
                changed = true;
            }
        });
    }

    /**
     * No more saves, for good: the topic left this broker without closing the subscription, and a save could take the
     * positions over from its new owner. Unlike {@link #stop}, which a failed deletion undoes, nothing undoes this.
     */
    void abandon() {
        abandoned = true;
    }

    /** No more saves: the subscription is being deleted (its positions are removed after it is). */
    void stop(boolean stop) {
        stopped = stop;
    }

    PositionStore store() {
        return store;
    }

    /** Why {@link #saveNow} refuses a save while the subscription is being deleted. */
    static final String DELETING = "the subscription is being deleted";

}
