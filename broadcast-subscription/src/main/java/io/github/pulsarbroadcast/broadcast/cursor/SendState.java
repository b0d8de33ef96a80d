package io.github.pulsarbroadcast.broadcast.cursor;

import org.apache.bookkeeper.mledger.impl.PositionImpl;

/**
 * The send side of a {@link VirtualCursor}: the next position to send, how far entries are being sent again after a
 * {@link VirtualCursor#rewind}, and the consumer's flow-control permits. The positions are primitive pairs, as in
 * the cursor (see its class comment); the dispatcher's per-delivery calls allocate nothing.
 *
 * <p>Threading: single writer, the subscription's dispatch thread (or the thread that constructs the cursor, before
 * it is shared). The next and resend pairs are read by that thread only; {@link #permits} is volatile for stats
 * readers.
 */
public final class SendState {

    /** The next position to send. Dispatch thread only. */
    private long nextLedger;
    private long nextEntry;
    /**
     * After a rewind, the highest position sent before it (ledger -1: none): entries up to it may have been
     * acknowledged since the rewind and are checked before they are sent again. Dispatch thread only.
     */
    private long resendLedger = -1;
    private long resendEntry;
    /** Messages the consumer can still receive. Single writer: the dispatch thread; volatile for stats readers. */
    private volatile int permits;

    SendState() {
    }

    /** The next position to send (a new object). */
    public PositionImpl next() {
        return PositionImpl.get(nextLedger, nextEntry);
    }

    /** The ledger of the next position to send. */
    public long nextLedger() {
        return nextLedger;
    }

    /** The entry of the next position to send. */
    public long nextEntry() {
        return nextEntry;
    }

    /** Compares the next position to send with {@code position}, as {@link PositionImpl#compareTo} would. */
    public int compareNextTo(PositionImpl position) {
        return VirtualCursor.compare(nextLedger, nextEntry, position.getLedgerId(), position.getEntryId());
    }

    /**
     * The lower of {@code lowest} and the next position to send: {@code lowest} itself unless this one is below it
     * (or it is null).
     */
    public PositionImpl lowerNext(PositionImpl lowest) {
        return lowest != null && compareNextTo(lowest) >= 0 ? lowest : next();
    }

    /** Moves the next position to send forward (after {@link VirtualCursor#skipTo}); never backwards. */
    public void advanceNextTo(PositionImpl position) {
        if (compareNextTo(position) < 0) {
            setNext(position);
        }
    }

    public int permits() {
        return permits;
    }

    /** Adds a flow's permits, saturating at {@link Integer#MAX_VALUE} (a client may send any number of flows). */
    public void addPermits(int additional) {
        permits = (int) Math.min(Integer.MAX_VALUE, (long) permits + additional);
    }

    /** Drops all permits: the client forgets its queue on reconnect and sends a fresh flow. */
    public void resetPermits() {
        permits = 0;
    }

    void setNext(PositionImpl position) {
        nextLedger = position.getLedgerId();
        nextEntry = position.getEntryId();
    }

    /** An entry of {@code messages} messages was handed over; {@code following} comes next. */
    void sent(PositionImpl following, int messages) {
        setNext(following);
        permits -= messages;
    }

    /** Entries up to {@code (ledger, entry)}, sent before a rewind, are being sent again. */
    void resendUpTo(long ledger, long entry) {
        resendLedger = ledger;
        resendEntry = entry;
    }

    /**
     * Whether {@code position}, next in line, is one sent before the last rewind (false once a position past those
     * was reached).
     */
    boolean isResending(PositionImpl position) {
        if (resendLedger < 0) {
            return false;
        }
        if (VirtualCursor.compare(position.getLedgerId(), position.getEntryId(), resendLedger, resendEntry) > 0) {
            resendLedger = -1;
            return false;
        }
        return true;
    }

    @Override
    public String toString() {
        return "next=" + nextLedger + ":" + nextEntry + ", permits=" + permits;
    }
}
