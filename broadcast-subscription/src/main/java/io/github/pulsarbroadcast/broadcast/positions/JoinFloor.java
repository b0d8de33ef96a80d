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
 * <p>Threading: immutable.
 */
public final class JoinFloor {

    private final long ledgerId;
    private final long entryId;

    public JoinFloor(long ledgerId, long entryId) {
        this.ledgerId = ledgerId;
        this.entryId = entryId;
    }

    public long ledgerId() {
        return ledgerId;
    }

    public long entryId() {
        return entryId;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof JoinFloor && ((JoinFloor) o).ledgerId == ledgerId && ((JoinFloor) o).entryId == entryId;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(ledgerId * 31 + entryId);
    }

    @Override
    public String toString() {
        return ledgerId + ":" + entryId;
    }
}
