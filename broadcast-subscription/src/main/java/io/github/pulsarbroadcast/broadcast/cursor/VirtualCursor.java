package io.github.pulsarbroadcast.broadcast.cursor;

import org.apache.bookkeeper.mledger.impl.PositionImpl;

/**
 * One broadcast consumer's position in the subscription: what it has acknowledged (a cumulative position plus
 * individually acknowledged positions above it) and what it was sent. This replaces the managed cursor that a
 * one-subscription-per-consumer design needs, and nothing of it is persisted: the subscription's durable
 * mark-delete position is the lowest {@link #acknowledged()} over all virtual cursors. Its acknowledgement state is
 * saved periodically ({@link #save}, {@link #restored}) so that a consumer resumes at its own position after
 * the topic moves.
 *
 * <p>Invariant: {@code acknowledged <= highestSent}, and every recorded individual ack lies in
 * {@code (acknowledged, highestSent]}. An ack above {@link #highestSent()} is rejected ({@link AckResult#NOT_SENT}),
 * so a client cannot move the subscription past messages it never received.
 *
 * <p>Threading: acknowledgements arrive on random executor threads and the dispatcher works on the subscription's
 * ordered thread, so the state is split:
 * <ul>
 *   <li>ack state ({@link #acknowledged}, {@link #individualAcks}, kept as bounded ranges) is guarded by this
 *       object's monitor; {@code acknowledged} is also volatile so that the mark-delete scan reads it without
 *       locking;</li>
 *   <li>{@link #highestSent} is single-writer (the dispatcher thread) and volatile for the ack threads;</li>
 *   <li>{@link #next} is single-writer and read only by the dispatcher thread; {@link #permits} is single-writer
 *       and volatile for stats readers.</li>
 *   <li>{@link #skipTo} also writes {@code highestSent}; it runs on the dispatcher thread too.</li>
 * </ul>
 */
public final class VirtualCursor {

    private static final long[] NO_RANGES = new long[0];

    private final CursorRules rules;
    /** Guarded by {@code this} for writes; volatile for lock-free reads. */
    private volatile PositionImpl acknowledged;
    /** Individually acknowledged positions above {@link #acknowledged}; null while empty. Guarded by {@code this}. */
    private AckRanges individualAcks;
    /** Volatile mirror of {@code individualAcks != null}, so the dispatcher can skip the lock in the common case. */
    private volatile boolean hasIndividualAcks;
    /** The highest position sent to the consumer. Single writer: dispatcher thread; volatile for ack threads. */
    private volatile PositionImpl highestSent;
    /** The next position to send. Dispatcher thread only. */
    private PositionImpl next;
    /** Messages the consumer can still receive (flow-control permits). Single writer: dispatcher thread; volatile
     *  for stats readers. */
    private volatile int permits;

    /**
     * A cursor at {@code start}: everything up to and including {@code start} counts as acknowledged and sent, and
     * the entry after it is the first to send.
     */
    public VirtualCursor(PositionImpl start, CursorRules rules) {
        this.rules = rules;
        this.acknowledged = start;
        this.highestSent = start;
        this.next = rules.sequence().next(start);
    }

    /**
     * A cursor restored from a saved position: {@code acknowledged} plus the individually acknowledged ranges
     * ({@code ledger, firstEntry, endEntry} triples). Everything up to the highest of them counts as sent, so the
     * consumer may acknowledge again what it received before the move; the first entry to send is the one after
     * {@code acknowledged} (individually acknowledged entries are passed over).
     */
    public static VirtualCursor restored(PositionImpl acknowledged, long[] ranges, CursorRules rules) {
        VirtualCursor cursor = new VirtualCursor(acknowledged, rules);
        if (ranges.length > 0) {
            synchronized (cursor) {
                cursor.individualAcks = new AckRanges();
                cursor.individualAcks.addTriples(ranges);
                cursor.moveAcknowledgedTo(acknowledged);
                cursor.hasIndividualAcks = cursor.individualAcks != null;
                PositionImpl last = cursor.individualAcks == null ? null : cursor.individualAcks.last();
                if (last != null && last.compareTo(cursor.highestSent) > 0) {
                    cursor.highestSent = last;
                }
                if (cursor.acknowledged.compareTo(cursor.highestSent) > 0) {
                    cursor.highestSent = cursor.acknowledged;
                }
                cursor.next = rules.sequence().next(cursor.acknowledged);
            }
        }
        return cursor;
    }

    /** Receives a cursor's acknowledgement state, read atomically ({@link #save}). */
    @FunctionalInterface
    public interface Saver<T> {
        /** {@code ranges}: individually acknowledged {@code ledger, firstEntry, endEntry} triples above it. */
        T save(PositionImpl acknowledged, long[] ranges);
    }

    /** Hands the acknowledged position and the individual ranges, read under the monitor, to {@code saver}. */
    public synchronized <T> T save(Saver<T> saver) {
        return saver.save(acknowledged, individualAcks == null ? NO_RANGES : individualAcks.toTriples());
    }

    // ----- acknowledgements (any thread) -----

    /** Everything at or below this position is acknowledged. Lock-free read. */
    public PositionImpl acknowledged() {
        return acknowledged;
    }

    /** Acknowledges {@code position} and everything before it. */
    public synchronized AckResult acknowledgeCumulative(PositionImpl position) {
        if (position.compareTo(highestSent) > 0) {
            return AckResult.NOT_SENT;
        }
        if (position.compareTo(acknowledged) <= 0) {
            return AckResult.DUPLICATE;
        }
        moveAcknowledgedTo(position);
        return AckResult.ADVANCED;
    }

    /** Acknowledges just {@code position}; the cumulative position moves once every position below it is acked. */
    public synchronized AckResult acknowledgeIndividual(PositionImpl position) {
        if (position.compareTo(highestSent) > 0) {
            return AckResult.NOT_SENT;
        }
        if (position.compareTo(acknowledged) <= 0) {
            return AckResult.DUPLICATE;
        }
        if (position.equals(rules.sequence().next(acknowledged))) {
            moveAcknowledgedTo(position);
            return AckResult.ADVANCED;
        }
        if (individualAcks == null) {
            individualAcks = new AckRanges();
            hasIndividualAcks = true;
        } else if (individualAcks.contains(position)) {
            return AckResult.DUPLICATE;
        }
        return individualAcks.add(position, rules.maxAckRanges()) ? AckResult.RECORDED : AckResult.DROPPED;
    }

    /**
     * Moves the acknowledged position forward to {@code position} if it is behind, dropping what lies below: used
     * when the subscription's cursor was moved past this consumer by retention, TTL or backlog-quota eviction.
     *
     * @return whether this cursor was behind
     */
    public synchronized boolean skipTo(PositionImpl position) {
        if (position.compareTo(acknowledged) <= 0) {
            return false;
        }
        moveAcknowledgedTo(position);
        if (acknowledged.compareTo(highestSent) > 0) {
            highestSent = acknowledged;
        }
        return true;
    }

    /**
     * Sets the cumulative position and absorbs the individually acknowledged ranges that now continue it: a
     * cumulative ack (or a skip) that closes a gap must move the position as far as an individual ack would.
     * Caller holds the monitor.
     */
    private void moveAcknowledgedTo(PositionImpl position) {
        PositionImpl cumulative = position;
        if (individualAcks != null) {
            cumulative = individualAcks.absorbInto(position, rules.sequence());
            if (individualAcks.isEmpty()) {
                individualAcks = null;
                hasIndividualAcks = false;
            }
        }
        acknowledged = cumulative;
    }

    /** Whether {@code position} was acknowledged on its own (above the cumulative position). */
    public boolean isIndividuallyAcknowledged(PositionImpl position) {
        if (!hasIndividualAcks) {
            return false;
        }
        synchronized (this) {
            return individualAcks != null && individualAcks.contains(position);
        }
    }

    /** How many positions are held as individual acks above the cumulative position. */
    public synchronized long individualAckCount() {
        return individualAcks == null ? 0 : individualAcks.positionCount();
    }

    /** How many ranges hold them (bounded by {@code broadcastMaxAckRangesPerConsumer}). */
    public synchronized int individualAckRanges() {
        return individualAcks == null ? 0 : individualAcks.rangeCount();
    }

    // ----- dispatch side (dispatcher thread only) -----

    /** The highest position sent; any thread. */
    public PositionImpl highestSent() {
        return highestSent;
    }

    /** The next position to send. */
    public PositionImpl next() {
        return next;
    }

    /** Records that the entry at {@code position} was handed to the connection; {@code following} comes next. */
    public void sent(PositionImpl position, PositionImpl following, int messages) {
        if (position.compareTo(highestSent) > 0) {
            highestSent = position;
        }
        next = following;
        permits -= messages;
    }

    /** Passes over an entry that needs no sending (it was acknowledged individually): {@code following} is next. */
    public void skip(PositionImpl following) {
        next = following;
    }

    /** Rewinds so that everything after the acknowledged position is sent again (redelivery). */
    public void rewind() {
        next = rules.sequence().next(acknowledged);
    }

    /** Moves the next position to send forward (after {@link #skipTo}); never backwards. */
    public void advanceNextTo(PositionImpl position) {
        if (position.compareTo(next) > 0) {
            next = position;
        }
    }

    public int permits() {
        return permits;
    }

    public void addPermits(int additional) {
        permits += additional;
    }

    /** Drops all permits: the client forgets its queue on reconnect and sends a fresh flow. */
    public void resetPermits() {
        permits = 0;
    }

    @Override
    public String toString() {
        return "VirtualCursor{acked=" + acknowledged + ", next=" + next + ", highestSent=" + highestSent
                + ", permits=" + permits + "}";
    }
}
