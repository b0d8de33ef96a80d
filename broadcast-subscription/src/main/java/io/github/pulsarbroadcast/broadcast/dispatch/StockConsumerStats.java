package io.github.pulsarbroadcast.broadcast.dispatch;

import java.util.AbstractList;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.pulsar.common.policies.data.stats.ConsumerStatsImpl;
import org.apache.pulsar.common.policies.data.stats.SubscriptionStatsImpl;

/**
 * The stock consumer stats of one broadcast subscription. A periodic pass ({@link #publish}) copies each consumer's
 * delivery counters into its stock {@code Consumer} and adds up, as it goes, what stock Pulsar's metrics aggregator
 * reads of them; on a scrape the aggregator gets those totals ({@link #applyTotals}) instead of one record per
 * consumer.
 *
 * <p>Why: on every scrape of {@code /metrics}, stock {@code NamespaceStatsAggregator} asks each topic for its stats;
 * {@code PersistentSubscription.getStats} builds a list with every consumer's {@code ConsumerStatsImpl}, and the
 * aggregator walks it again only to add the records up and count them. At 100,000 consumers that was three quarters
 * of the scrape's CPU (docs/benchmarks.md, "the stock part of a scrape"). Every other caller (admin
 * {@code topics stats}, the broker's topic stats) still gets every consumer.
 *
 * <p>What the aggregator gets is what it would have computed: the consumer count is the live one (the list it walks
 * has one element per consumer: the first carries the totals, the others are one shared record of zeros); the
 * message and byte counters are the running totals of what this pass copied into the stock consumers (stock
 * counts a departed consumer's counters in its subscription, and those are exactly what the pass copied), so they
 * never go backwards; rates, timestamps and unacknowledged counts are the sums and maxima as of the last pass (stock
 * computes the rates once per {@code statsUpdateFrequencyInSecs}; a sum may lag them by one
 * {@code broadcastStatsIntervalMs}).
 *
 * <p>Threading: {@link #publish} runs on the stats task (the broker's scheduler) under this object's monitor, which
 * guards the running totals and the scratch record (a task restarted after a failed close cannot overlap an old
 * run); {@link #published} is volatile and its {@link Totals} immutable; {@link #applyTotals} runs on any thread.
 * The "hide the consumer list" flag is per thread ({@link #withoutConsumerList}), with an atomic count of the threads
 * that set it.
 */
final class StockConsumerStats {

    /** The stock class that builds the broker's Prometheus metrics from every topic's stats (Pulsar 2.10). */
    static final String STOCK_AGGREGATOR = "org.apache.pulsar.broker.stats.prometheus.NamespaceStatsAggregator";

    private static final StackWalker STACK = StackWalker.getInstance();
    /** Set while this thread builds stock subscription stats that must not list the consumers. */
    private static final ThreadLocal<Boolean> HIDING = ThreadLocal.withInitial(() -> Boolean.FALSE);
    /**
     * Threads inside {@link #withoutConsumerList} now: stock code asks for the consumer list on every subscribe, and
     * while nobody hides it, one volatile read answers instead of a thread-local lookup.
     */
    private static final AtomicInteger HIDING_THREADS = new AtomicInteger();

    private final ConsumerStatsImpl scratch = new ConsumerStatsImpl();
    /** Messages and bytes copied into the stock consumers since the subscription opened; guarded by this. */
    private long msgOutTotal;
    private long bytesOutTotal;
    private volatile Totals published = new Totals(new Sums(), 0, 0);

    /** Whether the stock metrics aggregator is on this thread's stack (a walk of a few dozen frames). */
    static boolean calledByStockAggregator() {
        return STACK.walk(frames -> frames.anyMatch(f -> STOCK_AGGREGATOR.equals(f.getClassName())));
    }

    /** Runs {@code stock} with every broadcast dispatcher's consumer list empty for this thread. */
    static <T> T withoutConsumerList(Supplier<T> stock) {
        HIDING_THREADS.incrementAndGet();
        HIDING.set(Boolean.TRUE);
        try {
            return stock.get();
        } finally {
            HIDING.remove();
            HIDING_THREADS.decrementAndGet();
        }
    }

    /** Whether this thread is inside {@link #withoutConsumerList}. */
    static boolean hidingConsumerList() {
        return HIDING_THREADS.get() != 0 && HIDING.get();
    }

    /**
     * Copies every member's counters into its stock consumer ({@link BroadcastConsumer#publishStats}) and publishes
     * the totals of the pass; stats task. A pass that throws publishes nothing (the counters it copied are counted
     * by the next one, whose running totals include them).
     */
    synchronized void publish(Map<org.apache.pulsar.broker.service.Consumer, BroadcastConsumer> members) {
        Sums sums = new Sums();
        for (Map.Entry<org.apache.pulsar.broker.service.Consumer, BroadcastConsumer> e : members.entrySet()) {
            e.getValue().publishStats(e.getKey(), scratch);
            // publishStats leaves in the scratch record what it added to the stock counters.
            msgOutTotal += scratch.msgOutCounter;
            bytesOutTotal += scratch.bytesOutCounter;
            sums.add(e.getKey().getStats());
        }
        published = new Totals(sums, msgOutTotal, bytesOutTotal);
    }

    /**
     * Puts the totals into {@code stats}, stock subscription stats built without the consumer list, for a
     * subscription with {@code consumers} consumers now: its consumer list, rates, counters and timestamps.
     */
    void applyTotals(SubscriptionStatsImpl stats, int consumers) {
        Totals t = published;
        ConsumerStatsImpl record = t.sums.record(t.msgOut, t.bytesOut);
        stats.consumers = new TotalsList(consumers, record, new ConsumerStatsImpl());
        if (consumers == 0) {
            return; // stock sums nothing either
        }
        stats.msgRateOut += record.msgRateOut;
        stats.msgThroughputOut += record.msgThroughputOut;
        stats.msgRateRedeliver += record.msgRateRedeliver;
        stats.messageAckRate += record.messageAckRate;
        stats.chunkedMessageRate += record.chunkedMessageRate;
        stats.unackedMessages += t.sums.unacked;
        stats.lastConsumedTimestamp = Math.max(stats.lastConsumedTimestamp, record.lastConsumedTimestamp);
        stats.lastAckedTimestamp = Math.max(stats.lastAckedTimestamp, record.lastAckedTimestamp);
        // Replaces the departed consumers' part, which the running totals include.
        stats.msgOutCounter = Math.max(stats.msgOutCounter, t.msgOut);
        stats.bytesOutCounter = Math.max(stats.bytesOutCounter, t.bytesOut);
    }

    /** The published result of one pass. Immutable. */
    private static final class Totals {
        final Sums sums;
        final long msgOut;
        final long bytesOut;

        Totals(Sums sums, long msgOut, long bytesOut) {
            this.sums = sums;
            this.msgOut = msgOut;
            this.bytesOut = bytesOut;
        }
    }

    /** Sums and maxima over the consumers of one pass; written by the pass only, read after it is published. */
    private static final class Sums {
        double msgRateOut;
        double msgThroughputOut;
        double msgRateRedeliver;
        double messageAckRate;
        double chunkedMessageRate;
        long unacked;
        long lastConsumed;
        long lastAcked;
        boolean blocked;

        void add(ConsumerStatsImpl c) {
            msgRateOut += c.msgRateOut;
            msgThroughputOut += c.msgThroughputOut;
            msgRateRedeliver += c.msgRateRedeliver;
            messageAckRate += c.messageAckRate;
            chunkedMessageRate += c.chunkedMessageRate;
            unacked += c.unackedMessages;
            lastConsumed = Math.max(lastConsumed, c.lastConsumedTimestamp);
            lastAcked = Math.max(lastAcked, c.lastAckedTimestamp);
            blocked |= c.blockedConsumerOnUnackedMsgs;
        }

        /** A fresh record carrying these sums (what the aggregator adds up from a subscription's records). */
        ConsumerStatsImpl record(long msgOut, long bytesOut) {
            ConsumerStatsImpl r = new ConsumerStatsImpl();
            r.msgRateOut = msgRateOut;
            r.msgThroughputOut = msgThroughputOut;
            r.msgRateRedeliver = msgRateRedeliver;
            r.messageAckRate = messageAckRate;
            r.chunkedMessageRate = chunkedMessageRate;
            r.unackedMessages = (int) Math.min(Integer.MAX_VALUE, unacked);
            r.lastConsumedTimestamp = lastConsumed;
            r.lastAckedTimestamp = lastAcked;
            r.blockedConsumerOnUnackedMsgs = blocked;
            r.msgOutCounter = msgOut;
            r.bytesOutCounter = bytesOut;
            return r;
        }
    }

    /**
     * One element per consumer, as the aggregator counts them: the first carries the totals, every other one is the
     * same record of zeros. Read-only; walking it costs a few nanoseconds per element and reads no consumer.
     */
    static final class TotalsList extends AbstractList<ConsumerStatsImpl> {
        private final int size;
        private final ConsumerStatsImpl totals;
        private final ConsumerStatsImpl zeros;

        TotalsList(int size, ConsumerStatsImpl totals, ConsumerStatsImpl zeros) {
            this.size = size;
            this.totals = totals;
            this.zeros = zeros;
        }

        @Override
        public ConsumerStatsImpl get(int index) {
            Objects.checkIndex(index, size);
            return index == 0 ? totals : zeros;
        }

        @Override
        public int size() {
            return size;
        }

        @Override
        public void forEach(Consumer<? super ConsumerStatsImpl> action) {
            for (int i = 0; i < size; i++) {
                action.accept(i == 0 ? totals : zeros);
            }
        }
    }
}
