package io.github.pulsarbroadcast.broadcast.dispatch;

import java.util.AbstractList;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
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
 * message and byte counters are the running totals of every copy into the stock consumers, the last one made as a
 * consumer leaves ({@link #publishLast}), which is what stock adds up from the consumers' counters and the departed
 * consumers' part, so they never go backwards; rates, timestamps and unacknowledged counts are the sums and maxima as
 * of the last pass (stock computes the rates once per {@code statsUpdateFrequencyInSecs}; a sum may lag them, and
 * still count a consumer that left, for one {@code broadcastStatsIntervalMs}).
 *
 * <p>Threading: {@link #publish} runs on the stats task (the broker's scheduler) under this object's monitor, which
 * guards the scratch record (a task restarted after a failed close cannot overlap an old run); {@link #publishLast}
 * runs on the thread that removes the consumer. Each copy and its addition to the running totals (atomic) happen
 * under the consumer's monitor, so a consumer's last copy follows every earlier one. {@link #published} is volatile
 * and a published {@link Sums} is never written again; {@link #applyTotals} runs on any thread. The "hide the
 * consumer list" flag is per thread ({@link #withoutConsumerList}), with an atomic count of the threads that set it.
 */
final class StockConsumerStats {

    /** The stock class that builds the broker's Prometheus metrics from every topic's stats (Pulsar 2.10). */
    static final String STOCK_AGGREGATOR = "org.apache.pulsar.broker.stats.prometheus.NamespaceStatsAggregator";

    private static final StackWalker STACK = StackWalker.getInstance();
    /** Set (TRUE) while this thread builds stock subscription stats that must not list the consumers. */
    private static final ThreadLocal<Boolean> HIDING = new ThreadLocal<>();
    /**
     * Threads inside {@link #withoutConsumerList} now: stock code asks for the consumer list on every subscribe, and
     * while nobody hides it, one volatile read answers instead of a thread-local lookup.
     */
    private static final AtomicInteger HIDING_THREADS = new AtomicInteger();

    private final ConsumerStatsImpl scratch = new ConsumerStatsImpl();
    /** Messages and bytes copied into the stock consumers since the subscription opened. */
    private final AtomicLong msgOutTotal = new AtomicLong();
    private final AtomicLong bytesOutTotal = new AtomicLong();
    private volatile Sums published = new Sums();

    /** Whether the stock metrics aggregator is on this thread's stack (a walk of a few dozen frames). */
    static boolean calledByStockAggregator() {
        return STACK.walk(frames -> frames.anyMatch(f -> STOCK_AGGREGATOR.equals(f.getClassName())));
    }

    /** Runs {@code stock} with every broadcast dispatcher's consumer list empty for this thread. */
    static <T> T withoutConsumerList(Supplier<T> stock) {
        Boolean outer = HIDING.get();
        HIDING_THREADS.incrementAndGet();
        HIDING.set(Boolean.TRUE);
        try {
            return stock.get();
        } finally {
            if (outer == null) {
                HIDING.remove();
            }
            HIDING_THREADS.decrementAndGet();
        }
    }

    /** Whether this thread is inside {@link #withoutConsumerList}. */
    static boolean hidingConsumerList() {
        return HIDING_THREADS.get() != 0 && HIDING.get() == Boolean.TRUE;
    }

    /**
     * Copies every member's counters into its stock consumer and publishes the sums of the pass; stats task. A pass
     * that throws publishes the sums of the consumers it got through (the exception goes on to the caller's log).
     */
    synchronized void publish(Map<org.apache.pulsar.broker.service.Consumer, BroadcastConsumer> members) {
        Sums sums = new Sums();
        try {
            for (Map.Entry<org.apache.pulsar.broker.service.Consumer, BroadcastConsumer> e : members.entrySet()) {
                if (copy(e.getKey(), e.getValue(), scratch, false)) {
                    sums.add(e.getKey().getStats());
                }
            }
        } finally {
            published = sums;
        }
    }

    /**
     * The last copy of a consumer that leaves, before stock adds its counters to the subscription's; the removing
     * thread. Later deliveries to it (writes in flight) are not counted, in stock stats as before.
     */
    void publishLast(org.apache.pulsar.broker.service.Consumer consumer, BroadcastConsumer bc) {
        copy(consumer, bc, new ConsumerStatsImpl(), true);
    }

    private boolean copy(org.apache.pulsar.broker.service.Consumer consumer, BroadcastConsumer bc,
                         ConsumerStatsImpl into, boolean last) {
        synchronized (bc) {
            if (!bc.publishStats(consumer, into, last)) {
                return false;
            }
            countCopied(into.msgOutCounter, into.bytesOutCounter);
            return true;
        }
    }

    /** Adds one copy to the running totals. */
    void countCopied(long messages, long bytes) {
        msgOutTotal.addAndGet(messages);
        bytesOutTotal.addAndGet(bytes);
    }

    /**
     * Puts the totals into {@code stats}, stock subscription stats built without the consumer list, for a
     * subscription with {@code consumers} consumers now: its message and byte counters, consumer list, rates and
     * timestamps.
     */
    void applyTotals(SubscriptionStatsImpl stats, int consumers) {
        long msgOut = msgOutTotal.get();
        long bytesOut = bytesOutTotal.get();
        // Stock put the departed consumers' part there (the list was empty); the running totals include it.
        stats.msgOutCounter = Math.max(stats.msgOutCounter, msgOut);
        stats.bytesOutCounter = Math.max(stats.bytesOutCounter, bytesOut);
        Sums sums = published;
        ConsumerStatsImpl record = sums.record(msgOut, bytesOut);
        stats.consumers = new TotalsList(consumers, record, new ConsumerStatsImpl());
        if (consumers == 0) {
            return; // stock sums no rates or timestamps either
        }
        stats.msgRateOut += record.msgRateOut;
        stats.msgThroughputOut += record.msgThroughputOut;
        stats.msgRateRedeliver += record.msgRateRedeliver;
        stats.messageAckRate += record.messageAckRate;
        stats.chunkedMessageRate += record.chunkedMessageRate;
        stats.unackedMessages += sums.unacked;
        stats.lastConsumedTimestamp = Math.max(stats.lastConsumedTimestamp, record.lastConsumedTimestamp);
        stats.lastAckedTimestamp = Math.max(stats.lastAckedTimestamp, record.lastAckedTimestamp);
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
