package io.github.pulsarbroadcast.broadcast.dispatch;

import java.util.Arrays;

/**
 * The part of a subscription's metrics that takes a pass over every consumer (connected consumers by state, and the
 * lag quantiles over every position), gathered by the periodic sync's scan, which visits every position anyway, so
 * that a scrape costs the same at 100 or 100,000 consumers (issue 14). The figures are as of the last sync
 * ({@code broadcastMarkDeleteIntervalMs}, 1 s by default).
 *
 * <p>The scan gathers them only while someone reads them: for {@link #WANTED_NANOS} after each {@link #latest} call.
 * A read that finds nothing recent enough (the first scrape, or a dispatch thread that is late) gets null and makes
 * its own pass, as every scrape did before.
 *
 * <p>Threading: {@link #begin}, {@link #add} and {@link #publish} run on the dispatch thread (inside the scan), which
 * alone owns the scratch arrays; {@link #latest} runs on any thread. {@link #published} and {@link #wantedUntilNanos}
 * are volatile; a {@link Summary} is immutable.
 */
final class ConsumerSummaries {

    /** How long after a read the scan keeps gathering: longer than any usual scrape interval. */
    static final long WANTED_NANOS = 5L * 60 * 1_000_000_000L;

    private static final int STATES = BroadcastConsumer.State.values().length;

    private volatile Summary published;
    private volatile long wantedUntilNanos;
    private volatile boolean everWanted;
    /** Scratch of the scan in progress; dispatch thread only. */
    private long[] lags = new long[1024];
    private int count;
    private final int[] byState = new int[STATES];

    /**
     * The latest summary if it was taken within {@code maxAgeNanos} of {@code nowNanos}, else null; either way the
     * scan gathers again for {@link #WANTED_NANOS}.
     */
    Summary latest(long nowNanos, long maxAgeNanos) {
        wantedUntilNanos = nowNanos + WANTED_NANOS;
        everWanted = true;
        Summary s = published;
        return s != null && nowNanos - s.takenAtNanos <= maxAgeNanos ? s : null;
    }

    /** Whether the scan at {@code nowNanos} should gather; dispatch thread. */
    boolean wanted(long nowNanos) {
        return everWanted && nowNanos - wantedUntilNanos < 0;
    }

    /** Starts gathering a scan; dispatch thread. */
    void begin() {
        count = 0;
        Arrays.fill(byState, 0);
    }

    /** One position's lag in entries, and its consumer when connected (null when retained); dispatch thread. */
    void add(long lag, BroadcastConsumer attached) {
        if (count == lags.length) {
            lags = Arrays.copyOf(lags, count * 2);
        }
        lags[count++] = lag;
        if (attached != null) {
            byState[attached.state().ordinal()]++;
        }
    }

    /** Publishes what the scan gathered; dispatch thread. */
    void publish(long nowNanos) {
        published = Summary.of(lags, count, byState.clone(), nowNanos);
        if (lags.length > 4096 && count < lags.length / 4) {
            lags = new long[Math.max(1024, count * 2)]; // a subscription that shrank gives its scratch back
        }
    }

    /** Connected consumers by state and the lag quantiles over every position, at one moment. Immutable. */
    static final class Summary {
        final long takenAtNanos;
        private final int[] byState;
        final int lagCount;
        final long lagMedian;
        final long lagP99;
        final long lagMax;

        private Summary(long takenAtNanos, int[] byState, int lagCount, long lagMedian, long lagP99, long lagMax) {
            this.takenAtNanos = takenAtNanos;
            this.byState = byState;
            this.lagCount = lagCount;
            this.lagMedian = lagMedian;
            this.lagP99 = lagP99;
            this.lagMax = lagMax;
        }

        int consumers(BroadcastConsumer.State state) {
            return byState[state.ordinal()];
        }

        /** A reader's own pass: {@code connected} counted by state, {@code lags} (every position's) summarized. */
        static Summary direct(java.util.Collection<BroadcastConsumer> connected, long[] lags, long takenAtNanos) {
            int[] byState = new int[STATES];
            for (BroadcastConsumer bc : connected) {
                byState[bc.state().ordinal()]++;
            }
            return of(lags, lags.length, byState, takenAtNanos);
        }

        /** Summarizes {@code lags[0..n)}, which it reorders; {@code byState} is kept, not copied. */
        static Summary of(long[] lags, int n, int[] byState, long takenAtNanos) {
            if (n == 0) {
                return new Summary(takenAtNanos, byState, 0, 0, 0, 0);
            }
            long max = lags[0];
            for (int i = 1; i < n; i++) {
                max = Math.max(max, lags[i]);
            }
            long p99 = select(lags, n, nearestRank(0.99, n));
            long median = select(lags, n, nearestRank(0.5, n));
            return new Summary(takenAtNanos, byState, n, median, p99, max);
        }

        /** The 0-based index of the nearest-rank quantile {@code q}: the smallest value that {@code q} of n reach. */
        static int nearestRank(double q, int n) {
            return Math.min(n - 1, Math.max(0, (int) Math.ceil(q * n) - 1));
        }

        /**
         * The k-th smallest of {@code a[0..n)} (0-based), by quickselect with a middle pivot and Hoare's partition,
         * which splits runs of equal values evenly (lags are mostly equal); reorders {@code a}.
         */
        static long select(long[] a, int n, int k) {
            int lo = 0;
            int hi = n - 1;
            while (lo < hi) {
                long pivot = a[(lo + hi) >>> 1];
                int i = lo;
                int j = hi;
                while (i <= j) {
                    while (a[i] < pivot) {
                        i++;
                    }
                    while (a[j] > pivot) {
                        j--;
                    }
                    if (i <= j) {
                        long t = a[i];
                        a[i++] = a[j];
                        a[j--] = t;
                    }
                }
                if (k <= j) {
                    hi = j;
                } else if (k >= i) {
                    lo = i;
                } else {
                    return a[k];
                }
            }
            return a[k];
        }
    }
}
