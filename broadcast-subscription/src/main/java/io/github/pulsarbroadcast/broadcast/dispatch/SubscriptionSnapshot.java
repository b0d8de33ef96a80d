package io.github.pulsarbroadcast.broadcast.dispatch;

/**
 * What one broadcast subscription looks like at one moment, for metrics: connected consumers by where the dispatcher
 * keeps them and the lag quantiles over every position (a {@link ConsumerSummaries.Summary}, usually the one the
 * last periodic sync gathered), retained positions and the window; the counters and histograms are read live from
 * {@link #counters}.
 *
 * <p>Threading: immutable after construction.
 */
public final class SubscriptionSnapshot {

    private final ConsumerSummaries.Summary summary;
    private final int retained;
    private final int windowEntries;
    private final long windowBytes;
    private final DispatchCounters counters;

    SubscriptionSnapshot(ConsumerSummaries.Summary summary, int retained, int windowEntries, long windowBytes,
                         DispatchCounters counters) {
        this.summary = summary;
        this.retained = retained;
        this.windowEntries = windowEntries;
        this.windowBytes = windowBytes;
        this.counters = counters;
    }

    /** Connected consumers the dispatcher keeps in {@code state}. */
    public int consumers(BroadcastConsumer.State state) {
        return summary.consumers(state);
    }

    /** Positions retained for consumers that are not connected. */
    public int retained() {
        return retained;
    }

    public int windowEntries() {
        return windowEntries;
    }

    public long windowBytes() {
        return windowBytes;
    }

    /** Positions whose lag was measured (connected and retained). */
    public int lagCount() {
        return summary.lagCount;
    }

    /**
     * The lag in entries over every position (connected and retained) at the nearest-rank median: the smallest lag
     * that at least half of the positions do not exceed; 0 when there are no positions.
     */
    public long lagMedian() {
        return summary.lagMedian;
    }

    /** The same at the 99th percentile. */
    public long lagP99() {
        return summary.lagP99;
    }

    /** The largest lag. */
    public long lagMax() {
        return summary.lagMax;
    }

    public DispatchCounters counters() {
        return counters;
    }
}
