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
 * <p>Positions are held as primitive {@code (ledger, entry)} pairs, not as {@link PositionImpl} references: a cursor
 * lives as long as its consumer (in the old generation) and its positions change on every delivery and every ack,
 * and each reference store into a long-lived object costs G1 a dirty card to refine (its refinement threads took
 * 16-22% of the broker's CPU at 100,000 consumers, see docs/benchmarks.md, experiment 7). The accessors that
 * return a {@link PositionImpl} make a new one; the dispatcher's per-delivery calls ({@link #sent},
 * {@link SendState#nextLedger}, {@link SendState#compareNextTo}) do not.
 *
 * <p>Threading: acknowledgements arrive on the connections' event loops and the dispatcher works on the
 * subscription's dispatch thread, so the state is split:
 * <ul>
 *   <li>ack state (the acknowledged pair and {@link #individualAcks}, kept as bounded ranges) is guarded by this
 *       object's monitor, for reads too;</li>
 *   <li>the highest sent pair is single-writer (the dispatch thread). Its ledger changes only under the monitor
 *       and its entry is volatile, so a reader holding the monitor sees a pair that was the highest sent at some
 *       moment (the entry alone moves while the ledger stays);</li>
 *   <li>the send side ({@link #sending}: the next position, the permits) is single-writer, the dispatch thread
 *       (see {@link SendState});</li>
 *   <li>{@link #skipTo}, {@link #acknowledgeLost} and {@link #passWithheld} also write the highest sent pair; they
 *       run on the dispatch thread too.</li>
 * </ul>
 */
public final class VirtualCursor {

    private static final long[] NO_RANGES = new long[0];

    private final CursorRules rules;
    /** Everything at or below this position is acknowledged. Guarded by {@code this}. */
    private long ackedLedger;
    private long ackedEntry;
    /** Individually acknowledged positions above the acknowledged one; null while empty. Guarded by {@code this}. */
    private AckRanges individualAcks;
    /** Volatile mirror of {@code individualAcks != null}, so the dispatcher can skip the lock in the common case. */
    private volatile boolean hasIndividualAcks;
    /**
     * The highest position sent to the consumer. Single writer: the dispatch thread; the ledger is written under
     * {@code this} only, the entry is volatile (see the class comment).
     */
    private volatile long sentLedger;
    private volatile long sentEntry;
    /** The send side: the next position to send, the entries being sent again, the permits. Dispatch thread. */
    public final SendState sending = new SendState();

    /**
     * A cursor at {@code start}: everything up to and including {@code start} counts as acknowledged and sent, and
     * the entry after it is the first to send.
     */
    public VirtualCursor(PositionImpl start, CursorRules rules) {
        this.rules = rules;
        synchronized (this) {
            setAcknowledged(start);
            setSent(start.getLedgerId(), start.getEntryId());
        }
        sending.setNext(rules.sequence().next(start));
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
                cursor.individualAcks().addTriples(ranges);
                cursor.moveAcknowledgedTo(acknowledged);
                PositionImpl last = cursor.individualAcks == null ? null : cursor.individualAcks.last();
                if (last != null && cursor.compareToSent(last) > 0) {
                    cursor.setSent(last.getLedgerId(), last.getEntryId());
                    cursor.moveAcknowledgedTo(cursor.acknowledgedPosition()); // over entries no consumer is sent
                }
                cursor.sentUpToAcknowledged();
                cursor.sending.setNext(rules.sequence().next(cursor.acknowledgedPosition()));
            }
        }
        return cursor;
    }

    /** Receives a cursor's acknowledgement state, read atomically ({@link #save}). */
    @FunctionalInterface
    public interface Saver<T> {
        /**
         * {@code ranges}: individually acknowledged {@code ledger, firstEntry, endEntry} triples above it; null when
         * there were more than the caller's budget (none were copied).
         */
        T save(PositionImpl acknowledged, long[] ranges);
    }

    /** Hands the acknowledged position and the individual ranges, read under the monitor, to {@code saver}. */
    public <T> T save(Saver<T> saver) {
        return save(saver, Integer.MAX_VALUE);
    }

    /** As {@link #save(Saver)}, but the ranges are handed over (and copied) only when there are at most {@code max}. */
    public synchronized <T> T save(Saver<T> saver, int max) {
        if (individualAcks == null) {
            return saver.save(acknowledgedPosition(), NO_RANGES);
        }
        long[] ranges = individualAcks.rangeCount() > max ? null : individualAcks.toTriples();
        return saver.save(acknowledgedPosition(), ranges);
    }

    // ----- acknowledgements (any thread) -----

    /** Everything at or below this position is acknowledged (a new object). */
    public synchronized PositionImpl acknowledged() {
        return acknowledgedPosition();
    }

    /** {@code f} applied to the acknowledged position's ledger and entry, read under the monitor (no allocation). */
    public synchronized long acknowledgedAs(java.util.function.LongBinaryOperator f) {
        return f.applyAsLong(ackedLedger, ackedEntry);
    }

    /**
     * The lower of {@code lowest} and this cursor's acknowledged position: {@code lowest} itself unless this
     * cursor is below it (or it is null), so a scan over every cursor allocates only where the minimum moves.
     */
    public synchronized PositionImpl lowerAcknowledged(PositionImpl lowest) {
        return lowest != null && compare(ackedLedger, ackedEntry, lowest.getLedgerId(), lowest.getEntryId()) >= 0
                ? lowest : acknowledgedPosition();
    }

    /** Acknowledges {@code position} and everything before it. */
    public synchronized AckResult acknowledgeCumulative(PositionImpl position) {
        if (compareToSent(position) > 0) {
            return AckResult.NOT_SENT;
        }
        if (compareToAcknowledged(position) <= 0) {
            return AckResult.DUPLICATE;
        }
        moveAcknowledgedTo(position);
        return AckResult.ADVANCED;
    }

    /** Acknowledges just {@code position}; the cumulative position moves once every position below it is acked. */
    public synchronized AckResult acknowledgeIndividual(PositionImpl position) {
        if (compareToSent(position) > 0) {
            return AckResult.NOT_SENT;
        }
        if (compareToAcknowledged(position) <= 0) {
            return AckResult.DUPLICATE;
        }
        // With the entries no consumer is sent just before and after it, so that they do not split its ranges.
        PositionImpl first = rules.withheld().extendBack(position, ackedLedger, ackedEntry);
        if (first.equals(rules.sequence().next(acknowledgedPosition()))) {
            moveAcknowledgedTo(position);
            return AckResult.ADVANCED;
        }
        if (individualAcks != null && individualAcks.contains(position)) {
            return AckResult.DUPLICATE;
        }
        // Within its ledger: a range stays in one ledger (a saved one across two was dropped on restore, regression,
        // forty-first session's third review); ranges of two ledgers are joined when absorbed.
        boolean sameLedger = sentLedger == position.getLedgerId();
        PositionImpl last = rules.withheld().passFrom(position, rules.sequence(), position.getLedgerId(),
                sameLedger ? sentEntry : Long.MAX_VALUE);
        return individualAcks().add(first, last, rules.maxAckRanges()) ? AckResult.RECORDED : AckResult.DROPPED;
    }

    /**
     * Moves the acknowledged position forward to {@code position} if it is behind, dropping what lies below: used
     * when the subscription's cursor was moved past this consumer by retention, TTL or backlog-quota eviction.
     * Dispatch thread only (it writes the highest sent position).
     *
     * @return whether this cursor was behind
     */
    public synchronized boolean skipTo(PositionImpl position) {
        if (compareToAcknowledged(position) <= 0) {
            return false;
        }
        moveAcknowledgedTo(position);
        sentUpToAcknowledged();
        return true;
    }

    /**
     * Acknowledges {@code first} to {@code last} (one ledger): entries storage can never return, skipped for this
     * consumer ({@code autoSkipNonRecoverableData}), as stock's managed cursor marks a lost ledger's entries deleted.
     * Without it the acknowledged position stayed before them for good, and so did the subscription's mark-delete
     * position (regression, fortieth session, found by a review). Behind an entry sent and not acknowledged the range
     * is held with the individual acks. They count as sent. Dispatch thread only (it writes the highest sent position).
     */
    public synchronized void acknowledgeLost(PositionImpl first, PositionImpl last) {
        if (compareToAcknowledged(last) <= 0) {
            return;
        }
        if (compareToAcknowledged(first) <= 0 || first.equals(rules.sequence().next(acknowledgedPosition()))) {
            moveAcknowledgedTo(last);
            sentUpToAcknowledged();
        } else {
            individualAcks().addRange(first, last);
            if (compareToSent(last) > 0) {
                setSent(last.getLedgerId(), last.getEntryId());
            }
        }
    }

    /**
     * The consumer reached {@code position}, an entry no consumer is sent (recorded in the subscription's
     * {@link WithheldPositions}): it counts as sent, and the acknowledged position moves over it now if everything
     * before it is acknowledged, else with the acknowledgement that reaches it (joining the range of individual acks
     * just before it, if any). Dispatch thread only (it writes the highest sent position).
     *
     * @return whether the acknowledged position moved
     */
    public synchronized boolean passWithheld(PositionImpl position) {
        if (compareToAcknowledged(position) <= 0) {
            return false;
        }
        if (compareToSent(position) > 0) {
            setSent(position.getLedgerId(), position.getEntryId());
        }
        if (position.equals(rules.sequence().next(acknowledgedPosition()))) {
            moveAcknowledgedTo(position);
            return true;
        }
        if (individualAcks != null
                && individualAcks.contains(PositionImpl.get(position.getLedgerId(), position.getEntryId() - 1))) {
            individualAcks.addRange(position, position); // joins the range before it: no new range
        }
        return false;
    }

    /** The individually acknowledged ranges, made when the first is recorded. Caller holds the monitor. */
    private AckRanges individualAcks() {
        if (individualAcks == null) {
            individualAcks = new AckRanges();
            hasIndividualAcks = true;
        }
        return individualAcks;
    }

    /**
     * Sets the cumulative position and absorbs the individually acknowledged ranges that now continue it: a
     * cumulative ack (or a skip) that closes a gap must move the position as far as an individual ack would.
     * Caller holds the monitor.
     */
    private void moveAcknowledgedTo(PositionImpl position) {
        PositionImpl cumulative = position;
        while (true) {
            if (individualAcks != null) {
                cumulative = individualAcks.absorbInto(cumulative, rules.sequence());
                if (individualAcks.isEmpty()) {
                    individualAcks = null;
                    hasIndividualAcks = false;
                }
            }
            // Over the entries no consumer is sent that follow, as far as this consumer was sent (or passed) them.
            PositionImpl passed = rules.withheld().passFrom(cumulative, rules.sequence(), sentLedger, sentEntry);
            if (passed == cumulative) {
                break;
            }
            cumulative = passed;
        }
        setAcknowledged(cumulative);
    }

    /** What lies below the acknowledged position counts as sent (skipped, never sent). Dispatch thread only. */
    private void sentUpToAcknowledged() {
        if (compare(ackedLedger, ackedEntry, sentLedger, sentEntry) > 0) {
            setSent(ackedLedger, ackedEntry);
        }
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

    /** The highest position sent (a new object); any thread. */
    public synchronized PositionImpl highestSent() {
        return PositionImpl.get(sentLedger, sentEntry);
    }

    /** Records that the entry at {@code position} was handed to the connection; {@code following} comes next. */
    public void sent(PositionImpl position, PositionImpl following, int messages) {
        long ledger = position.getLedgerId();
        long entry = position.getEntryId();
        if (ledger == sentLedger) {
            if (entry > sentEntry) {
                sentEntry = entry;
            }
        } else if (ledger > sentLedger) {
            synchronized (this) {
                setSent(ledger, entry);
            }
        }
        sending.sent(following, messages);
    }

    /** Passes over an entry that needs no sending (it was acknowledged individually): {@code following} is next. */
    public void skip(PositionImpl following) {
        sending.setNext(following);
    }

    /** Rewinds so that everything after the acknowledged position is sent again (redelivery). */
    public void rewind() {
        sending.setNext(rules.sequence().next(acknowledged()));
        sending.resendUpTo(sentLedger, sentEntry);
    }

    /**
     * Whether the entry at {@code position}, next in line, needs no sending: acknowledged on its own, or, while
     * entries sent before a {@link #rewind} are sent again, at or below the acknowledged position. Acks that the
     * client sent before it asked for the redelivery can arrive after the rewind (the Java client sends a redelivery
     * at once and its grouped acks up to 100 ms later); without the second check their messages were sent again.
     * Only entries up to the highest sent before the rewind can be acknowledged, so the lock is taken for them only.
     * Dispatch thread.
     */
    public boolean needsNoSending(PositionImpl position) {
        if (sending.isResending(position)) {
            synchronized (this) {
                if (compareToAcknowledged(position) <= 0) {
                    return true;
                }
            }
        }
        return isIndividuallyAcknowledged(position);
    }

    // ----- the pairs -----

    /** Caller holds the monitor. */
    private PositionImpl acknowledgedPosition() {
        return PositionImpl.get(ackedLedger, ackedEntry);
    }

    /** Caller holds the monitor. */
    private void setAcknowledged(PositionImpl position) {
        ackedLedger = position.getLedgerId();
        ackedEntry = position.getEntryId();
    }

    /**
     * Caller holds the monitor (a new ledger is published under it) and runs on the dispatch thread, or constructs
     * the cursor before it is shared.
     */
    private void setSent(long ledger, long entry) {
        sentLedger = ledger;
        sentEntry = entry;
    }

    /** Caller holds the monitor. */
    private int compareToAcknowledged(PositionImpl position) {
        return compare(position.getLedgerId(), position.getEntryId(), ackedLedger, ackedEntry);
    }

    /** Caller holds the monitor (see the class comment on reading the highest sent pair). */
    private int compareToSent(PositionImpl position) {
        return compare(position.getLedgerId(), position.getEntryId(), sentLedger, sentEntry);
    }

    /** Orders two positions given as {@code (ledger, entry)} pairs as {@link PositionImpl#compareTo} does. */
    public static int compare(long ledgerA, long entryA, long ledgerB, long entryB) {
        return ledgerA != ledgerB ? Long.compare(ledgerA, ledgerB) : Long.compare(entryA, entryB);
    }

    @Override
    public synchronized String toString() {
        return "VirtualCursor{acked=" + ackedLedger + ":" + ackedEntry + ", " + sending + ", highestSent=" + sentLedger
                + ":" + sentEntry + "}";
    }
}
