package io.github.pulsarbroadcast.bench;

import java.util.BitSet;

/**
 * One consumer's bookkeeping: when it connected, which message sequence numbers it received, duplicates, messages
 * out of order, and (for a paused consumer) when it caught up.
 *
 * <p>Threading: messages arrive on the consumer's pinned listener thread, the connect time on a client I/O thread,
 * the catch-up start on the main thread, and the main thread reads everything at the end. Every method is
 * {@code synchronized}; the lock is uncontended almost always.
 */
final class ConsumerTracker {

    private final int index;
    private final String subscription;
    private final boolean pauseGroup;

    private final BitSet seen = new BitSet();
    private long receipts;
    private long duplicates;
    private long outOfOrder;
    private int maxSeq = -1;
    /** Every sequence number below it was received. */
    private int contiguous;

    private long connectedAtMs = -1;
    private long subscribeMs = -1;

    private int catchUpTarget = -1;
    private long catchUpStartNanos;
    private long catchUpNanos = -1;
    private long delivered = -1;

    ConsumerTracker(int index, String subscription, boolean pauseGroup) {
        this.index = index;
        this.subscription = subscription;
        this.pauseGroup = pauseGroup;
    }

    int index() {
        return index;
    }

    String subscription() {
        return subscription;
    }

    /** True for the consumers that the backlog experiment pauses. */
    boolean pauseGroup() {
        return pauseGroup;
    }

    synchronized void connected(long atMs, long ownMs) {
        connectedAtMs = atMs;
        subscribeMs = ownMs;
    }

    synchronized long connectedAtMs() {
        return connectedAtMs;
    }

    synchronized long subscribeMs() {
        return subscribeMs;
    }

    /**
     * Records message {@code seq}; returns {@link Receipt#FIRST} the first time, {@link Receipt#DUPLICATE} after,
     * and {@link Receipt#CAUGHT_UP} for the first receipt that completes this consumer's catch-up.
     */
    synchronized Receipt onMessage(int seq, long nowNanos) {
        receipts++;
        if (seen.get(seq)) {
            duplicates++;
            return Receipt.DUPLICATE;
        }
        seen.set(seq);
        if (seq < maxSeq) {
            outOfOrder++;
        } else {
            maxSeq = seq;
        }
        if (seq == contiguous) {
            contiguous = seen.nextClearBit(seq);
        }
        return checkCaughtUp(nowNanos) ? Receipt.CAUGHT_UP : Receipt.FIRST;
    }

    /**
     * Starts measuring the catch-up: done once every message up to {@code targetSeq} has arrived. Returns true when
     * that is already the case.
     */
    synchronized boolean startCatchUp(int targetSeq, long nowNanos) {
        catchUpTarget = targetSeq;
        catchUpStartNanos = nowNanos;
        return checkCaughtUp(nowNanos);
    }

    private boolean checkCaughtUp(long nowNanos) {
        if (catchUpTarget >= 0 && catchUpNanos < 0 && contiguous > catchUpTarget) {
            catchUpNanos = nowNanos - catchUpStartNanos;
            return true;
        }
        return false;
    }

    /** Catch-up time in milliseconds, or -1 when it has not caught up (or never paused). */
    synchronized long catchUpMs() {
        return catchUpNanos < 0 ? -1 : catchUpNanos / 1_000_000;
    }

    /**
     * Counts and remembers the messages received among {@code published} (the sequence numbers the producer got
     * acknowledged), and returns that count.
     */
    synchronized long settle(BitSet published) {
        BitSet both = (BitSet) seen.clone();
        both.and(published);
        delivered = both.cardinality();
        return delivered;
    }

    /** What the last {@link #settle} counted, or -1 before. */
    synchronized long delivered() {
        return delivered;
    }

    synchronized long duplicates() {
        return duplicates;
    }

    synchronized long outOfOrder() {
        return outOfOrder;
    }

    synchronized long receipts() {
        return receipts;
    }

    /** What {@link #onMessage} saw. Threading: immutable. */
    enum Receipt {
        FIRST, DUPLICATE, CAUGHT_UP
    }
}
