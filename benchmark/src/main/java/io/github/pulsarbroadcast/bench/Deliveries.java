package io.github.pulsarbroadcast.bench;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageListener;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.ReaderListener;

/**
 * Where every received message of one run is accounted: the consumer's {@link ConsumerTracker}, the latency
 * histograms (measured messages only) and the run-wide counters that the main thread polls (first receipts, last
 * receipt time, consumers still catching up).
 *
 * <p>Threading: {@link #onMessage} runs concurrently on the clients' listener threads (each consumer pinned to one);
 * counters are {@link LongAdder}s and atomics; the main thread polls them.
 */
final class Deliveries {

    /**
     * The sequence number of a benchmark message (0-based, in publish order). It travels as the message's sequence
     * id, a field of the metadata that every client decodes anyway. An earlier version used a message property,
     * which made every consumer of every mode build a properties map and decode a string per message: about a tenth
     * of the benchmark JVM's CPU at 10,000 consumers, measurement overhead rather than workload.
     */
    static int sequenceOf(Message<?> msg) {
        return Math.toIntExact(msg.getSequenceId());
    }

    private final ConsumerTracker[] trackers;
    private final int measuredFromSeq;
    private final LatencyRecorder latency = new LatencyRecorder();
    private final LongAdder firstReceipts = new LongAdder();
    private final LongAdder allReceipts = new LongAdder();
    private final AtomicInteger catchingUp = new AtomicInteger();
    private final AtomicReference<String> listenerError = new AtomicReference<>();
    private volatile long lastReceiptNanos = System.nanoTime();

    Deliveries(ConsumerTracker[] trackers, int measuredFromSeq) {
        this.trackers = trackers;
        this.measuredFromSeq = measuredFromSeq;
    }

    ConsumerTracker[] trackers() {
        return trackers;
    }

    LatencyRecorder latency() {
        return latency;
    }

    /** Distinct (consumer, message) pairs received so far. */
    long firstReceipts() {
        return firstReceipts.sum();
    }

    long allReceipts() {
        return allReceipts.sum();
    }

    long lastReceiptNanos() {
        return lastReceiptNanos;
    }

    /** Paused consumers that have not caught up yet. */
    int catchingUp() {
        return catchingUp.get();
    }

    /** The first exception a listener threw, or null. */
    String listenerError() {
        return listenerError.get();
    }

    /** Starts the catch-up of every paused consumer: each must get every message up to {@code targetSeq}. */
    void startCatchUp(int targetSeq) {
        long now = System.nanoTime();
        int paused = 0;
        for (ConsumerTracker t : trackers) {
            paused += t.pauseGroup() ? 1 : 0;
        }
        // All at once first, so that early finishers cannot bring the count to 0 before the last one started.
        catchingUp.addAndGet(paused);
        for (ConsumerTracker t : trackers) {
            if (t.pauseGroup()) {
                if (t.startCatchUp(targetSeq, now)) {
                    caughtUp();
                }
            }
        }
    }

    private void caughtUp() {
        if (catchingUp.decrementAndGet() == 0 && latency.window() == LatencyRecorder.CATCH_UP) {
            latency.window(LatencyRecorder.NONE);
        }
    }

    void onMessage(ConsumerTracker tracker, Message<?> msg) {
        long nowMs = System.currentTimeMillis();
        long nowNanos = System.nanoTime();
        try {
            int seq = sequenceOf(msg);
            allReceipts.increment();
            ConsumerTracker.Receipt receipt = tracker.onMessage(seq, nowNanos);
            if (receipt == ConsumerTracker.Receipt.DUPLICATE) {
                return;
            }
            firstReceipts.increment();
            lastReceiptNanos = nowNanos;
            if (receipt == ConsumerTracker.Receipt.CAUGHT_UP) {
                caughtUp();
            }
            if (seq >= measuredFromSeq) {
                latency.record(nowMs, msg.getPublishTime(), msg.getBrokerPublishTime(), tracker.pauseGroup());
            }
        } catch (RuntimeException e) {
            listenerError.compareAndSet(null, "consumer " + tracker.index() + ": " + Errors.brief(e));
        }
    }

    /**
     * The listener of one consumer or reader: records the message, then acknowledges it (consumers only).
     * Threading: called on the consumer's pinned listener thread; holds only final references.
     */
    static final class Receiver implements MessageListener<byte[]>, ReaderListener<byte[]> {
        private static final long serialVersionUID = 1L;

        private final transient Deliveries deliveries;
        private final transient ConsumerTracker tracker;

        Receiver(Deliveries deliveries, ConsumerTracker tracker) {
            this.deliveries = deliveries;
            this.tracker = tracker;
        }

        @Override
        public void received(Consumer<byte[]> consumer, Message<byte[]> msg) {
            deliveries.onMessage(tracker, msg);
            consumer.acknowledgeAsync(msg.getMessageId());
        }

        @Override
        public void received(Reader<byte[]> reader, Message<byte[]> msg) {
            deliveries.onMessage(tracker, msg);
        }
    }
}
