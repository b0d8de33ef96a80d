package io.github.pulsarbroadcast.broadcast.dispatch;

import io.github.pulsarbroadcast.broadcast.cursor.AckResult;
import io.github.pulsarbroadcast.broadcast.cursor.VirtualCursor;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.broker.service.Consumer;
import org.apache.pulsar.common.policies.data.stats.ConsumerStatsImpl;

/**
 * A consumer attached to a broadcast subscription: its identity on its connection, its {@link VirtualCursor} and
 * its place in the dispatcher's bookkeeping. It holds no stock {@link Consumer}: the adapter
 * ({@link BroadcastDispatcher}) maps stock consumers to these.
 *
 * <p>Threading: the identity fields, {@link #cnx}, {@link #cursor} and {@link #inbox} are final. {@link #state}
 * (volatile for readers) and {@link #epoch} are owned by the dispatch thread (set before the consumer is handed to
 * it). The output counters are single-writer (the connection's event-loop thread, after each write) and volatile for
 * the stats task, which publishes them into the stock consumer's stats under this object's monitor (and so does the
 * removing thread once, as the consumer leaves).
 */
public final class BroadcastConsumer {

    /** Where the dispatcher keeps this consumer. Dispatch thread only. */
    public enum State {
        /** Nothing to do until a flow or a redelivery: no permits. */
        IDLE,
        /** At the tail with permits, waiting for the next entry to be written. */
        WAITING,
        /** Behind the tail with permits, queued to be served from the window. */
        PENDING,
        /** Behind the window with permits, waiting for a catch-up read. */
        CATCHING_UP,
        /** Removed from the subscription. */
        REMOVED
    }

    final long consumerId;
    final String name;
    final ConsumerConnection cnx;
    final VirtualCursor cursor;
    final boolean brokerEntryMetadata;
    /** The key this consumer is filed under among those catching up; dispatch thread only. */
    PositionImpl catchingUpAt;
    /** Whether the join resumed a position retained under this name. */
    final boolean resumed;
    private final SubscriptionEngine engine;
    /** Flows and redeliveries not applied yet (its own monitor guards it), and the one task that applies them. */
    final ConsumerInbox inbox = new ConsumerInbox();
    final Runnable inboxTask;

    /**
     * Written by the dispatch thread only; volatile so that metrics and the consumer listing, which read it from
     * other threads, see where the consumer is (a write costs a few nanoseconds, a few per delivery).
     */
    volatile State state = State.IDLE;
    /**
     * Whether the dispatch thread ran this consumer's join. Until then nothing may place it: a resumed position still
     * carries the previous connection's permits, and a periodic sync that runs between the attach and the join task
     * (it sees the position as attached) would otherwise send on them. Dispatch thread only.
     */
    boolean joined;
    /** The consumer epoch messages carry (Failover redelivery); dispatch thread only. */
    long epoch;
    /**
     * Set once when the consumer leaves ({@link #markDetached}, on the leaving thread, then {@link #markRemoved});
     * volatile so that the dispatch thread and event-loop writes stop for it.
     */
    private volatile boolean removed;

    /** Single writer: the connection's event loop. */
    private volatile long msgOut;
    private volatile long bytesOut;
    /** When this consumer was last sent something; single writer: the connection's event loop. */
    private volatile long lastSentMillis;
    /** When this consumer last acknowledged; written by ack threads (any writer, the latest store wins). */
    volatile long lastAckedMillis;
    /** What was last published into the stock consumer's stats. Guarded by {@code this}. */
    private long publishedMsgOut;
    private long publishedBytesOut;
    /** Set by the last publication (the consumer left): nothing more is copied. Guarded by {@code this}. */
    private boolean statsClosed;

    BroadcastConsumer(SubscriptionEngine engine, long consumerId, String name, ConsumerConnection cnx,
                      VirtualCursor cursor, boolean brokerEntryMetadata, long epoch, boolean resumed) {
        this.engine = engine;
        this.consumerId = consumerId;
        this.name = name;
        this.cnx = cnx;
        this.cursor = cursor;
        this.brokerEntryMetadata = brokerEntryMetadata;
        this.epoch = epoch;
        this.resumed = resumed;
        this.inboxTask = () -> engine.applyInbox(this);
    }

    void markRemoved() {
        removed = true;
        state = State.REMOVED;
    }

    /**
     * It left: nothing more is sent to it, from now on (any thread; {@link RetainedCursors#detach} calls it before the
     * name can be taken again). The dispatch thread removes it from its lists later ({@link #markRemoved}); until
     * then a consumer that resumed its name shares its cursor, and serving the one that left would move that cursor
     * past entries the new one never gets (a review, forty-fifth session).
     */
    void markDetached() {
        removed = true;
    }

    boolean isRemoved() {
        return removed;
    }

    public long consumerId() {
        return consumerId;
    }

    /** The consumer's name (what it resumes its position by). */
    public String name() {
        return name;
    }

    /** Where the dispatcher keeps this consumer now; any thread (a snapshot). */
    public State state() {
        return state;
    }

    /** When this consumer last acknowledged (epoch millis; 0 before its first ack); any thread. */
    public long lastAckedMillis() {
        return lastAckedMillis;
    }

    /** When this consumer was last sent something (epoch millis; 0 before the first send); any thread. */
    public long lastSentMillis() {
        return lastSentMillis;
    }

    /** Messages sent to this consumer since it joined; any thread. */
    public long messagesSent() {
        return msgOut;
    }

    /** Adds flow-control permits (from the consumer's flow command). */
    public void flow(int permits) {
        engine.flow(this, permits);
    }

    /**
     * Applies one acknowledgement; any thread. A cumulative one with entry id -1 acknowledges everything before the
     * ledger's first entry.
     */
    public AckResult acknowledge(long ledgerId, long entryId, boolean cumulative) {
        return engine.acknowledge(this, ledgerId, entryId, cumulative);
    }

    /** The virtual cursor (read-only use outside the dispatcher). */
    public VirtualCursor cursor() {
        return cursor;
    }

    /** Counts a write made at {@code nowMillis}; called only on the connection's event loop. */
    void countSent(int messages, int bytes, long nowMillis) {
        msgOut = msgOut + messages;
        bytesOut = bytesOut + bytes;
        lastSentMillis = nowMillis;
    }

    /**
     * Publishes what was sent since the last call into the stock {@code consumer}'s counters (through its public
     * {@code updateStats}), so that topic stats, rates and metrics show broadcast consumers like any other; on
     * return {@code scratch} holds what was added. {@code last}: the consumer is leaving and this is the last copy.
     * Returns false, copying nothing, after the last one. Only {@link StockConsumerStats} calls it: every copy must
     * be counted in its running totals (which stock Pulsar's metrics read instead of the consumers' counters).
     * {@code scratch} belongs to the caller.
     */
    synchronized boolean publishStats(Consumer consumer, ConsumerStatsImpl scratch, boolean last) {
        if (statsClosed) {
            return false;
        }
        statsClosed = last;
        long m = msgOut;
        long b = bytesOut;
        scratch.msgOutCounter = m - publishedMsgOut;
        scratch.bytesOutCounter = b - publishedBytesOut;
        scratch.availablePermits = Math.max(cursor.sending.permits(), 0);
        scratch.lastConsumedTimestamp = lastSentMillis;
        scratch.lastAckedTimestamp = lastAckedMillis;
        scratch.unackedMessages = 0;
        scratch.blockedConsumerOnUnackedMsgs = false;
        scratch.avgMessagesPerEntry = 1;
        consumer.updateStats(scratch);
        publishedMsgOut = m;
        publishedBytesOut = b;
        return true;
    }

    @Override
    public String toString() {
        return name + "/" + consumerId + " " + cursor;
    }
}
