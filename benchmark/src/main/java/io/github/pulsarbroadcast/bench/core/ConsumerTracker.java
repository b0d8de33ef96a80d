package io.github.pulsarbroadcast.bench.core;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.util.BitSet;

/**
 * One consumer's bookkeeping: when it connected, which message sequence numbers it received, duplicates, messages
 * out of order, and (for a paused consumer) when it caught up. A consumer fleet in another JVM keeps its own trackers
 * and ships their state over with {@link #writeTo} and {@link #readFrom}.
 *
 * <p>Threading: messages arrive on the consumer's listener (or event-loop) thread, the connect time on a client I/O
 * thread, the catch-up start on the main thread, and the main thread reads everything at the end. Every mutable
 * field is guarded by {@code this}: every method that touches one is {@code synchronized} (uncontended almost
 * always).
 */
public final class ConsumerTracker {

    private final int index;
    private final String subscription;
    private final boolean pauseGroup;

    private BitSet seen = new BitSet();
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

    public ConsumerTracker(int index, String subscription, boolean pauseGroup) {
        this.index = index;
        this.subscription = subscription;
        this.pauseGroup = pauseGroup;
    }

    /** True when consumer {@code index} belongs to the paused {@code fraction}: every (1/fraction)-th one. */
    public static boolean inPauseGroup(int index, double fraction) {
        return fraction > 0 && Math.floor((index + 1) * fraction) > Math.floor(index * fraction);
    }

    public int index() {
        return index;
    }

    public String subscription() {
        return subscription;
    }

    /** True for the consumers that the backlog experiment pauses. */
    public boolean pauseGroup() {
        return pauseGroup;
    }

    /** Records the end of the first subscribe: {@code atMs} after the connect phase began, {@code ownMs} its own. */
    public synchronized void connected(long atMs, long ownMs) {
        connectedAtMs = atMs;
        subscribeMs = ownMs;
    }

    public synchronized long connectedAtMs() {
        return connectedAtMs;
    }

    public synchronized long subscribeMs() {
        return subscribeMs;
    }

    /**
     * Records message {@code seq}; returns {@link Receipt#FIRST} the first time, {@link Receipt#DUPLICATE} after,
     * and {@link Receipt#CAUGHT_UP} for the first receipt that completes this consumer's catch-up.
     */
    public synchronized Receipt onMessage(int seq, long nowNanos) {
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
    public synchronized boolean startCatchUp(int targetSeq, long nowNanos) {
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
    public synchronized long catchUpMs() {
        return catchUpNanos < 0 ? -1 : catchUpNanos / 1_000_000;
    }

    /**
     * Counts and remembers the messages received among {@code published} (the sequence numbers the producer got
     * acknowledged), and returns that count.
     */
    public synchronized long settle(BitSet published) {
        BitSet both = (BitSet) seen.clone();
        both.and(published);
        delivered = both.cardinality();
        return delivered;
    }

    /** The sequence numbers among {@code published} that this consumer has not received (a new set). */
    public synchronized BitSet missing(BitSet published) {
        BitSet missing = (BitSet) published.clone();
        missing.andNot(seen);
        return missing;
    }

    /** What the last {@link #settle} counted, or -1 before. */
    public synchronized long delivered() {
        return delivered;
    }

    public synchronized long duplicates() {
        return duplicates;
    }

    public synchronized long outOfOrder() {
        return outOfOrder;
    }

    public synchronized long receipts() {
        return receipts;
    }

    /** Writes everything {@link #readFrom} needs to give another tracker of the same consumer this state. */
    public synchronized void writeTo(DataOutput out) throws IOException {
        out.writeInt(index);
        out.writeLong(receipts);
        out.writeLong(duplicates);
        out.writeLong(outOfOrder);
        out.writeInt(maxSeq);
        out.writeInt(contiguous);
        out.writeLong(connectedAtMs);
        out.writeLong(subscribeMs);
        out.writeInt(catchUpTarget);
        out.writeLong(catchUpNanos);
        long[] words = seen.toLongArray();
        out.writeInt(words.length);
        for (long w : words) {
            out.writeLong(w);
        }
    }

    /**
     * Replaces this tracker's state with what {@link #writeTo} wrote for the same consumer (its index first: the
     * caller reads it to find this tracker, then passes the rest here).
     */
    public synchronized void readFrom(DataInput in) throws IOException {
        receipts = in.readLong();
        duplicates = in.readLong();
        outOfOrder = in.readLong();
        maxSeq = in.readInt();
        contiguous = in.readInt();
        connectedAtMs = in.readLong();
        subscribeMs = in.readLong();
        catchUpTarget = in.readInt();
        catchUpNanos = in.readLong();
        long[] words = new long[in.readInt()];
        for (int i = 0; i < words.length; i++) {
            words[i] = in.readLong();
        }
        seen = BitSet.valueOf(words);
    }

    /** What {@link #onMessage} saw. Threading: immutable. */
    public enum Receipt {
        FIRST, DUPLICATE, CAUGHT_UP
    }
}
