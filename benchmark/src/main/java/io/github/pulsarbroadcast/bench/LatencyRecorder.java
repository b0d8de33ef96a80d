package io.github.pulsarbroadcast.bench;

import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.AbstractHistogram;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/**
 * Latency histograms in milliseconds: end-to-end (receive time minus the message's publish time), publish to broker
 * and broker to consumer (split by the broker's publish timestamp), and, for the backlog experiment, the end-to-end
 * latency of the consumers that never paused, per window (before the pause, during it, during the catch-up).
 *
 * <p>Threading: {@link #record} runs on many listener threads at once ({@link ConcurrentHistogram} is wait-free for
 * writers); {@link #window} is set by the main thread (pause, resume) and by whichever listener thread completes
 * the last catch-up; the main thread reads copies at the end.
 */
final class LatencyRecorder {

    /** Backlog windows; {@link #NONE} when no pause is planned or it is over. */
    static final int NONE = 0;
    static final int BEFORE = 1;
    static final int PAUSE = 2;
    static final int CATCH_UP = 3;

    private static final long HIGHEST_MS = TimeUnit.HOURS.toMillis(1);

    private final ConcurrentHistogram endToEnd = newHistogram();
    private final ConcurrentHistogram publishToBroker = newHistogram();
    private final ConcurrentHistogram brokerToConsumer = newHistogram();
    private final ConcurrentHistogram[] others = {null, newHistogram(), newHistogram(), newHistogram()};
    private volatile int window = NONE;

    private static ConcurrentHistogram newHistogram() {
        return new ConcurrentHistogram(HIGHEST_MS, 3);
    }

    void window(int w) {
        window = w;
    }

    int window() {
        return window;
    }

    /**
     * Records one measured message received at {@code nowMs} (epoch milliseconds) by a consumer that is
     * ({@code paused == true}) or is not in the pause group.
     */
    void record(long nowMs, long publishTimeMs, Optional<Long> brokerPublishTimeMs, boolean pauseGroup) {
        long e2e = clamp(nowMs - publishTimeMs);
        endToEnd.recordValue(e2e);
        if (brokerPublishTimeMs.isPresent()) {
            long broker = brokerPublishTimeMs.get();
            publishToBroker.recordValue(clamp(broker - publishTimeMs));
            brokerToConsumer.recordValue(clamp(nowMs - broker));
        }
        int w = window;
        if (w != NONE && !pauseGroup) {
            others[w].recordValue(e2e);
        }
    }

    private static long clamp(long ms) {
        return Math.max(0, Math.min(ms, HIGHEST_MS));
    }

    Percentiles endToEnd() {
        return summary(endToEnd);
    }

    Percentiles publishToBroker() {
        return summary(publishToBroker);
    }

    Percentiles brokerToConsumer() {
        return summary(brokerToConsumer);
    }

    /** The non-paused consumers' latency in window {@code w} ({@link #BEFORE}, {@link #PAUSE}, {@link #CATCH_UP}). */
    Percentiles others(int w) {
        return summary(others[w]);
    }

    /** Live P99 of the end-to-end latency so far, for the progress bar. */
    long liveP99() {
        return endToEnd.getTotalCount() == 0 ? 0 : endToEnd.getValueAtPercentile(99);
    }

    private static Percentiles summary(AbstractHistogram live) {
        Histogram copy = new Histogram(HIGHEST_MS, 3);
        copy.add(live);
        return Percentiles.of(copy);
    }
}
