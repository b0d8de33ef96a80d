package io.github.pulsarbroadcast.broadcast.positions;

/**
 * Saved with a snapshot of consumer positions: the lowest acknowledged position at which a consumer that is <b>not</b>
 * in the snapshot may have started. Such a consumer joined after the snapshot was captured, so it started at the tail
 * as it was then or later ({@code Latest}), or at the mark-delete position ({@code Earliest}, or during a recovery
 * window, in which case the floor is that window's start). After a crash the new owner starts names it does not
 * know at this floor during its recovery window instead of at the mark-delete position: a consumer that joined after
 * the last save gets again at most what was published between that save and its join, not the slowest consumer's
 * whole backlog.
 *
 * <p>A save made when the subscription closed inside a recovery window also carries that window's end
 * ({@link #windowEndMillis}, wall clock): the next owner keeps the window open until then (not for a full grace period
 * again, which would hold the mark-delete position still for as long as moves follow each other within the grace).
 *
 * <p>Threading: immutable.
 */
public final class JoinFloor {

    private final long ledgerId;
    private final long entryId;
    private final long windowEndMillis;
    private final boolean windowAfterReset;

    public JoinFloor(long ledgerId, long entryId) {
        this(ledgerId, entryId, 0);
    }

    /** {@code windowEndMillis}: when the recovery window the subscription closed in ends (wall clock), 0: none. */
    public JoinFloor(long ledgerId, long entryId, long windowEndMillis) {
        this(ledgerId, entryId, windowEndMillis, false);
    }

    /**
     * As above; {@code windowAfterReset}: that window was opened by a reset-cursor alone, so every consumer it may
     * start was known (see {@link #windowAfterReset()}); only with a window end.
     */
    public JoinFloor(long ledgerId, long entryId, long windowEndMillis, boolean windowAfterReset) {
        this.ledgerId = ledgerId;
        this.entryId = entryId;
        this.windowEndMillis = windowEndMillis;
        this.windowAfterReset = windowEndMillis > 0 && windowAfterReset;
    }

    /**
     * Whether the recovery window the subscription closed in was opened by a reset-cursor alone (not by a load
     * without a save made on close, nor a reopen): the next owner then knows every consumer that may have been
     * attached, and an operator's skip in the rest of the window counts from the consumers' positions.
     */
    public boolean windowAfterReset() {
        return windowAfterReset;
    }

    /** When the recovery window that the subscription closed in ends (wall clock, ms); 0 when it closed outside one. */
    public long windowEndMillis() {
        return windowEndMillis;
    }

    public long ledgerId() {
        return ledgerId;
    }

    public long entryId() {
        return entryId;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof JoinFloor && ((JoinFloor) o).ledgerId == ledgerId && ((JoinFloor) o).entryId == entryId
                && ((JoinFloor) o).windowEndMillis == windowEndMillis
                && ((JoinFloor) o).windowAfterReset == windowAfterReset;
    }

    @Override
    public int hashCode() {
        return Long.hashCode((ledgerId * 31 + entryId) * 31 + windowEndMillis) * 2 + (windowAfterReset ? 1 : 0);
    }

    @Override
    public String toString() {
        return windowEndMillis == 0 ? ledgerId + ":" + entryId : ledgerId + ":" + entryId + " (window until "
                + windowEndMillis + (windowAfterReset ? ", opened by a reset" : "") + ")";
    }
}
