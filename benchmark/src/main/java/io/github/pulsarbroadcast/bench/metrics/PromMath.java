package io.github.pulsarbroadcast.bench.metrics;

import java.util.Arrays;

/**
 * The two PromQL functions the dashboard needs, computed on the sampled series as Prometheus computes them:
 * {@code rate()} of a counter over a time window (counter resets taken into account) and
 * {@code histogram_quantile()} over cumulative {@code le} buckets (linear interpolation inside the bucket, the
 * highest finite bound for a rank in the {@code +Inf} bucket).
 *
 * <p>Threading: stateless; any thread.
 */
public final class PromMath {

    private PromMath() {
    }

    /**
     * Per-second rate of counter {@code v} (sampled at times {@code t}, seconds) at every sample, over the samples
     * of the preceding {@code window} seconds: the increase between the first and the last sample in the window
     * (a decrease is a counter reset, after which the new value is all increase) divided by the time between them.
     * Prometheus extrapolates to the window's edges as well; on a series sampled at a steady interval that changes
     * nothing but the first points. NaN where fewer than two samples fall in the window or a value is missing.
     */
    public static double[] rate(double[] t, double[] v, double window) {
        double[] out = new double[t.length];
        int first = 0;
        for (int i = 0; i < t.length; i++) {
            while (first < i && t[i] - t[first] > window + 1e-9) {
                first++;
            }
            out[i] = increase(t, v, first, i);
        }
        return out;
    }

    /** The per-second increase from sample {@code from} to sample {@code to}, resets counted; NaN if undefined. */
    static double increase(double[] t, double[] v, int from, int to) {
        if (to <= from || t[to] <= t[from]) {
            return Double.NaN;
        }
        double sum = 0;
        for (int k = from + 1; k <= to; k++) {
            if (Double.isNaN(v[k]) || Double.isNaN(v[k - 1])) {
                return Double.NaN;
            }
            sum += v[k] >= v[k - 1] ? v[k] - v[k - 1] : v[k];
        }
        return sum / (t[to] - t[from]);
    }

    /**
     * {@code histogram_quantile(q, ...)} of one histogram: {@code upper} are the buckets' {@code le} bounds (one of
     * them {@code +Inf}), {@code cumulative} their counts, in any order. NaN without a {@code +Inf} bucket, with
     * fewer than two buckets or no observations; {@code -Inf} / {@code +Inf} for q below 0 / above 1.
     */
    public static double quantile(double q, double[] upper, double[] cumulative) {
        if (q < 0) {
            return Double.NEGATIVE_INFINITY;
        }
        if (q > 1) {
            return Double.POSITIVE_INFINITY;
        }
        int n = upper.length;
        Integer[] order = new Integer[n];
        Arrays.setAll(order, i -> i);
        Arrays.sort(order, (a, b) -> Double.compare(upper[a], upper[b]));
        double[] le = new double[n];
        double[] count = new double[n];
        for (int i = 0; i < n; i++) {
            le[i] = upper[order[i]];
            // Counts are cumulative; buckets scraped at slightly different moments can break that: keep it monotonic.
            count[i] = i == 0 ? cumulative[order[i]] : Math.max(count[i - 1], cumulative[order[i]]);
        }
        if (n < 2 || le[n - 1] != Double.POSITIVE_INFINITY || !(count[n - 1] > 0)) {
            return Double.NaN;
        }
        double rank = q * count[n - 1];
        int b = 0;
        while (b < n - 1 && count[b] < rank) {
            b++;
        }
        if (b == n - 1) {
            return le[n - 2];
        }
        if (b == 0 && le[0] <= 0) {
            return le[0];
        }
        double start = b == 0 ? 0 : le[b - 1];
        double inBucket = b == 0 ? count[0] : count[b] - count[b - 1];
        double rankInBucket = b == 0 ? rank : rank - count[b - 1];
        if (inBucket <= 0) {
            return start;
        }
        return start + (le[b] - start) * (rankInBucket / inBucket);
    }
}
