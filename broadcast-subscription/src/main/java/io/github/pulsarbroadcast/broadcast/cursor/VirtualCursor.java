package io.github.pulsarbroadcast.broadcast.cursor;

import java.util.TreeSet;
import org.apache.bookkeeper.mledger.impl.PositionImpl;

/**
 * One broadcast consumer's position in the subscription: what it has acknowledged (a cumulative position plus
 * individually acknowledged positions above it) and what it was sent. This replaces the managed cursor that a
 * one-subscription-per-consumer design needs, and nothing of it is persisted: the subscription's durable
 * mark-delete position is the lowest {@link #acknowledged()} over all virtual cursors.
 *
 * <p>Invariant: {@code acknowledged <= highestSent}, and every recorded individual ack lies in
 * {@code (acknowledged, highestSent]}. An ack above {@link #highestSent()} is rejected ({@link AckResult#NOT_SENT}),
 * so a client cannot move the subscription past messages it never received.
 *
 * <p>Threading: acknowledgements arrive on random executor threads and the dispatcher works on the subscription's
 * ordered thread, so the state is split:
 * <ul>
 *   <li>ack state ({@link #acknowledged}, {@link #individualAcks}) is guarded by this object's monitor;
 *       {@code acknowledged} is also volatile so that the mark-delete scan reads it without locking;</li>
 *   <li>{@link #highestSent} is single-writer (the dispatcher thread) and volatile for the ack threads;</li>
 *   <li>{@link #next} is single-writer and read only by the dispatcher thread; {@link #permits} is single-writer
 *       and volatile for stats readers.</li>
 *   <li>{@link #skipTo} also writes {@code highestSent}; it runs on the dispatcher thread too.</li>
 * </ul>
 */
public final class VirtualCursor {

    /** Guarded by {@code this} for writes; volatile for lock-free reads. */
    private volatile PositionImpl acknowledged;
    /** Individually acknowledged positions above {@link #acknowledged}; null while empty. Guarded by {@code this}. */
    private TreeSet<PositionImpl> individualAcks;
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
     * {@code firstToSend} is the first position to send.
     */
    public VirtualCursor(PositionImpl start, PositionImpl firstToSend) {
        this.acknowledged = start;
        this.highestSent = start;
        this.next = firstToSend;
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
        acknowledged = position;
        if (individualAcks != null) {
            individualAcks.headSet(position, true).clear();
            clearIndividualAcksIfEmpty();
        }
        return AckResult.ADVANCED;
    }

    /** Acknowledges just {@code position}; the cumulative position moves once every position below it is acked. */
    public synchronized AckResult acknowledgeIndividual(PositionImpl position, PositionSequence sequence) {
        if (position.compareTo(highestSent) > 0) {
            return AckResult.NOT_SENT;
        }
        if (position.compareTo(acknowledged) <= 0) {
            return AckResult.DUPLICATE;
        }
        if (!position.equals(sequence.next(acknowledged))) {
            if (individualAcks == null) {
                individualAcks = new TreeSet<>();
                hasIndividualAcks = true;
            }
            return individualAcks.add(position) ? AckResult.RECORDED : AckResult.DUPLICATE;
        }
        PositionImpl cumulative = position;
        if (individualAcks != null) {
            // The gap just closed: absorb the individually acked positions that are now contiguous.
            while (!individualAcks.isEmpty() && individualAcks.first().equals(sequence.next(cumulative))) {
                cumulative = individualAcks.pollFirst();
            }
            clearIndividualAcksIfEmpty();
        }
        acknowledged = cumulative;
        return AckResult.ADVANCED;
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
        acknowledged = position;
        if (individualAcks != null) {
            individualAcks.headSet(position, true).clear();
            clearIndividualAcksIfEmpty();
        }
        if (position.compareTo(highestSent) > 0) {
            highestSent = position;
        }
        return true;
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

    /** How many individual acks are held above the cumulative position. */
    public synchronized int individualAckCount() {
        return individualAcks == null ? 0 : individualAcks.size();
    }

    private void clearIndividualAcksIfEmpty() {
        if (individualAcks.isEmpty()) {
            individualAcks = null;
            hasIndividualAcks = false;
        }
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
    public void rewind(PositionSequence sequence) {
        next = sequence.next(acknowledged);
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
