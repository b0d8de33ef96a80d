package io.github.pulsarbroadcast.broadcast.dispatch;

import org.apache.bookkeeper.mledger.impl.PositionImpl;

/**
 * The operator's reset-cursors of one subscription as the periodic sync and joins see them: while one runs, joins are
 * refused and the mark-delete position holds still; a mark-delete computed from a scan that began before a reset is
 * never issued ({@link #markDeleteUnlessResetSince}), because the reset restarts every position after that scan.
 *
 * <p>Threading: {@link #begin} and {@link #end} run on the admin's thread, the rest on the dispatch thread (and
 * {@link #underWay} on subscribe threads). Both counts are guarded by this object's monitor, under which the sync also
 * issues its mark-delete, so a reset that begins after the check cannot slip in before the mark-delete is issued;
 * {@link #underWay} reads the running count without the lock (volatile).
 */
final class ResetGate {

    /** Resets under way. Written under the monitor; volatile for lock-free readers. */
    private volatile int running;
    /** Resets begun so far. Guarded by the monitor. */
    private long begun;

    /** An operator's reset-cursor starts. */
    synchronized void begin() {
        begun++;
        running++;
    }

    /** It ended (done or failed). */
    synchronized void end() {
        running--;
    }

    boolean underWay() {
        return running > 0;
    }

    /** What {@link #markDeleteUnlessResetSince} compares with: read before a scan starts. */
    synchronized long begunSoFar() {
        return begun;
    }

    /**
     * Issues {@code markDelete} (the scan's result) unless a reset runs or began since {@code begunBeforeScan}:
     * returns whether it did.
     */
    synchronized boolean markDeleteUnlessResetSince(long begunBeforeScan, SubscriptionStorage storage,
                                                    PositionImpl markDelete) {
        if (running > 0 || begun != begunBeforeScan) {
            return false;
        }
        storage.markDelete(markDelete);
        return true;
    }
}
