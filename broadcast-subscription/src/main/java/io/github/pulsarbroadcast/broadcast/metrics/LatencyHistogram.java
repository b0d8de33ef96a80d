package io.github.pulsarbroadcast.broadcast.metrics;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * A latency histogram with fixed bucket bounds in milliseconds, written as a Prometheus histogram (cumulative
 * {@code _bucket{le=...}}, {@code _sum}, {@code _count}). The bounds are those of Pulsar's own latency buckets
 * ({@code pulsar_storage_write_latency_le_*}: 0.5 to 1000 ms) extended to 5 s, so stage latencies of a slow
 * consumer fleet still land in a bucket below {@code +Inf}.
 *
 * <p>Contract: a recording costs one bucket search over {@link #BOUNDS_MS} and two atomic additions, and never
 * allocates. Values below zero count as zero.
 *
 * <p>Threading: any number of writers; {@link #snapshot} from any thread. Each bucket and the sum are exact; a
 * snapshot taken during recordings may count a recording in its bucket and not yet in the sum (as Prometheus'
 * client histograms do).
 */
public final class LatencyHistogram {

    /** Upper bounds (inclusive) of the buckets, in milliseconds; a last bucket {@code +Inf} follows. */
    public static final double[] BOUNDS_MS = {0.5, 1, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000};

    private static final long[] BOUNDS_NANOS = new long[BOUNDS_MS.length];

    static {
        for (int i = 0; i < BOUNDS_MS.length; i++) {
            BOUNDS_NANOS[i] = (long) (BOUNDS_MS[i] * 1_000_000);
        }
    }

    /** Per bucket (not cumulative); atomic. */
    private final AtomicLongArray counts = new AtomicLongArray(BOUNDS_MS.length + 1);
    /** Sum of the recorded values in nanoseconds; atomic. */
    private final LongAdder sumNanos = new LongAdder();

    /** Records one value of {@code nanos} nanoseconds. */
    public void recordNanos(long nanos) {
        recordNanos(nanos, 1);
    }

    /** Records {@code times} values of {@code nanos} nanoseconds each (the entries of one read share a time). */
    public void recordNanos(long nanos, int times) {
        if (times <= 0) {
            return;
        }
        long value = Math.max(0, nanos);
        counts.addAndGet(bucketOf(value), times);
        sumNanos.add(value * times);
    }

    static int bucketOf(long nanos) {
        for (int i = 0; i < BOUNDS_NANOS.length; i++) {
            if (nanos <= BOUNDS_NANOS[i]) {
                return i;
            }
        }
        return BOUNDS_NANOS.length;
    }

    /** The counts so far. */
    public Snapshot snapshot() {
        long[] c = new long[counts.length()];
        for (int i = 0; i < c.length; i++) {
            c[i] = counts.get(i);
        }
        return new Snapshot(c, sumNanos.sum() / (double) TimeUnit.MILLISECONDS.toNanos(1));
    }

    /** What a histogram held at one moment. Immutable. */
    public static final class Snapshot {
        private final long[] counts;
        private final double sumMs;

        Snapshot(long[] counts, double sumMs) {
            this.counts = counts;
            this.sumMs = sumMs;
        }

        /** Values at or below {@code BOUNDS_MS[i]} (or, for {@code i == BOUNDS_MS.length}, all of them). */
        public long cumulative(int i) {
            long total = 0;
            for (int b = 0; b <= i; b++) {
                total += counts[b];
            }
            return total;
        }

        public long count() {
            return cumulative(counts.length - 1);
        }

        public double sumMs() {
            return sumMs;
        }
    }
}
