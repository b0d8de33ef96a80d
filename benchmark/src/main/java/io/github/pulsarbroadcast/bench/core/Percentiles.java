package io.github.pulsarbroadcast.bench.core;

import org.HdrHistogram.AbstractHistogram;

/**
 * A distribution summary in one unit (milliseconds for latencies and connect times): count, mean, P50, P95, P99,
 * P99.9 and max. An empty distribution has count 0 and zeros elsewhere.
 *
 * <p>Threading: a value object, written once when built; any thread may read it after that.
 */
public final class Percentiles {

    public long count;
    public double mean;
    public long p50;
    public long p95;
    public long p99;
    public long p999;
    public long max;

    /** For Jackson. */
    public Percentiles() {
    }

    /** Summarises {@code h}; the caller must not record into it meanwhile (take a copy of a live histogram). */
    public static Percentiles of(AbstractHistogram h) {
        Percentiles p = new Percentiles();
        p.count = h.getTotalCount();
        if (p.count == 0) {
            return p;
        }
        p.mean = Math.round(h.getMean() * 100) / 100.0;
        p.p50 = h.getValueAtPercentile(50);
        p.p95 = h.getValueAtPercentile(95);
        p.p99 = h.getValueAtPercentile(99);
        p.p999 = h.getValueAtPercentile(99.9);
        p.max = h.getMaxValue();
        return p;
    }

    /** True when P50 <= P95 <= P99 <= P99.9 <= max. */
    public boolean ordered() {
        return p50 <= p95 && p95 <= p99 && p99 <= p999 && p999 <= max;
    }
}
