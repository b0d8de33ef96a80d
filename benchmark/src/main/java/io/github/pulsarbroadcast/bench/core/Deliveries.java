package io.github.pulsarbroadcast.bench.core;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * Where every received message of one run is accounted, whichever client received it (the stock Java client's
 * listener or a simulated consumer of the fleet): the consumer's {@link ConsumerTracker}, the latency histograms and
 * per-message fan-out (measured messages only) and the run-wide counters that the main thread polls (first receipts,
 * last receipt time, consumers still catching up).
 *
 * <p>Threading: {@link #onMessage} runs concurrently on the receiving threads (each consumer pinned to one); counters
 * are {@link LongAdder}s and atomics, {@link #lastReceiptNanos} is volatile; the main thread polls them.
 */
public final class Deliveries {

    private final ConsumerTracker[] trackers;
    private final int measuredFromSeq;
    private final LatencyRecorder latency = new LatencyRecorder();
    private final FanOut fanOut;
    private final LongAdder firstReceipts = new LongAdder();
    /** Period of the run's sends (0: unknown, as in a capacity run), for {@link #warmupReceiptsInWindow}. */
    private final long periodNanos;
    private final LongAdder warmupInWindow = new LongAdder();
    private final LongAdder allReceipts = new LongAdder();
    private final AtomicInteger catchingUp = new AtomicInteger();
    private final AtomicReference<String> listenerError = new AtomicReference<>();
    private volatile long lastReceiptNanos = System.nanoTime();

    /**
     * {@code trackers} may hold nulls (a fleet process tracks only its own consumers); messages from
     * {@code measuredFromSeq} on are measured, and there are {@code totalMessages} in all.
     */
    public Deliveries(ConsumerTracker[] trackers, int measuredFromSeq, int totalMessages) {
        this(trackers, measuredFromSeq, totalMessages, 0);
    }

    /** As above, for sends every {@code periodNanos} (which {@link #warmupReceiptsInWindow} needs). */
    public Deliveries(ConsumerTracker[] trackers, int measuredFromSeq, int totalMessages, long periodNanos) {
        this.trackers = trackers;
        this.measuredFromSeq = measuredFromSeq;
        this.fanOut = new FanOut(totalMessages);
        this.periodNanos = periodNanos;
    }

    public ConsumerTracker[] trackers() {
        return trackers;
    }

    public LatencyRecorder latency() {
        return latency;
    }

    public FanOut fanOut() {
        return fanOut;
    }

    public int measuredFromSeq() {
        return measuredFromSeq;
    }

    /** Distinct (consumer, message) pairs received so far. */
    public long firstReceipts() {
        return firstReceipts.sum();
    }

    /**
     * First receipts of warm-up messages that came at or after the intended send time of the first measured message
     * (a warm-up message's intended time plus the periods between them): the CPU window starts with that send, so
     * their work is in the window's CPU and they count as deliveries of it. 0 without a period.
     */
    public long warmupReceiptsInWindow() {
        return warmupInWindow.sum();
    }

    /**
     * Forgets what fleet processes ship (latencies, fan-out, warm-up receipts in the window) before merging a fresh set
     * of their files.
     */
    public void resetMerged() {
        latency.reset();
        fanOut.reset();
        warmupInWindow.reset();
    }

    /** Adds another process's {@link #warmupReceiptsInWindow} (a fleet's, when merging). */
    public void addWarmupReceiptsInWindow(long n) {
        warmupInWindow.add(n);
    }

    public long allReceipts() {
        return allReceipts.sum();
    }

    /** When the last first receipt happened ({@link System#nanoTime}). */
    public long lastReceiptNanos() {
        return lastReceiptNanos;
    }

    /** Paused consumers that have not caught up yet. */
    public int catchingUp() {
        return catchingUp.get();
    }

    /** The first exception a listener threw, or null. */
    public String listenerError() {
        return listenerError.get();
    }

    /** Notes the first error of a receiving thread. */
    public void listenerFailed(String error) {
        listenerError.compareAndSet(null, error);
    }

    /** Starts the catch-up of every paused consumer: each must get every message up to {@code targetSeq}. */
    public void startCatchUp(int targetSeq) {
        long now = System.nanoTime();
        int paused = 0;
        for (ConsumerTracker t : trackers) {
            paused += t != null && t.pauseGroup() ? 1 : 0;
        }
        // All at once first, so that early finishers cannot bring the count to 0 before the last one started.
        catchingUp.addAndGet(paused);
        for (ConsumerTracker t : trackers) {
            if (t != null && t.pauseGroup() && t.startCatchUp(targetSeq, now)) {
                caughtUp();
            }
        }
    }

    private void caughtUp() {
        if (catchingUp.decrementAndGet() == 0 && latency.window() == LatencyRecorder.CATCH_UP) {
            latency.window(LatencyRecorder.NONE);
        }
    }

    /**
     * Accounts message {@code seq} received by {@code tracker}'s consumer at {@code nowNanos} / {@code nowMs}
     * (monotonic and epoch clocks). {@code intendedNanos} is the message's intended send time on the monotonic clock
     * (0 if it carries none), {@code publishMs} its publish time, {@code brokerPublishMs} the broker's timestamp or
     * a negative value.
     */
    public void onMessage(ConsumerTracker tracker, int seq, long nowNanos, long nowMs, long intendedNanos,
            long publishMs, long brokerPublishMs) {
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
        if (seq < measuredFromSeq) {
            if (periodNanos > 0 && intendedNanos > 0
                    && nowNanos - (intendedNanos + (measuredFromSeq - seq) * periodNanos) >= 0) {
                warmupInWindow.increment();
            }
        } else {
            latency.record(nowNanos, nowMs, intendedNanos, publishMs, brokerPublishMs, tracker.pauseGroup());
            long e2e = intendedNanos > 0 ? TimeUnit.NANOSECONDS.toMillis(nowNanos - intendedNanos) : nowMs - publishMs;
            fanOut.record(seq, Math.max(0, e2e));
        }
    }
}
