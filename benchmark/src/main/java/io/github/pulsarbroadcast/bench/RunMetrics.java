package io.github.pulsarbroadcast.bench;

import io.github.pulsarbroadcast.bench.core.Mode;
import io.github.pulsarbroadcast.bench.metrics.MetricsSampler;
import io.github.pulsarbroadcast.bench.metrics.MetricsSeries;
import io.github.pulsarbroadcast.bench.metrics.StageBreakdown;

/**
 * The broker's own metrics during one broadcast run (broadcast and split modes, {@code --metrics-interval} above 0,
 * never in the unreported warm-up runs): samples the broker's {@code /metrics} from the start of the run
 * ({@link MetricsSampler}), adds a scrape just before the first measured message is due so that the measured window
 * starts on a scrape, and at the end records the window, makes the last scrape and fills the run's
 * {@link ModeResult#brokerStages}.
 *
 * <p>Threading: the run's thread calls every method; the sampler scrapes on its own thread.
 */
final class RunMetrics {

    private final MetricsSampler sampler;
    private final BenchSettings s;
    private MetricsSeries series;

    private RunMetrics(MetricsSampler sampler, BenchSettings s) {
        this.sampler = sampler;
        this.s = s;
    }

    /** Starts sampling for a broadcast run, or returns null when this run is not sampled. */
    static RunMetrics start(BenchSettings s, Mode mode, Broker broker, String topic, String label) {
        if (!mode.broadcast() || s.metricsIntervalSeconds <= 0 || broker.adminUrl() == null) {
            return null;
        }
        String url = s.metricsUrl != null ? s.metricsUrl : MetricsSampler.metricsUrl(broker.adminUrl());
        return new RunMetrics(MetricsSampler.start(url, topic, label, s.metricsIntervalSeconds,
                RunMetrics::machineSamples), s);
    }

    /** The machine's busy and stolen CPU seconds so far ({@link ProcStats#machineCpuSeconds}); none off Linux. */
    private static java.util.Map<String, Double> machineSamples() {
        double[] cpu = ProcStats.machineCpuSeconds();
        return cpu == null ? java.util.Map.of()
                : java.util.Map.of(MetricsSampler.MACHINE_BUSY, cpu[0], MetricsSampler.MACHINE_STOLEN, cpu[1]);
    }

    /** Schedules a scrape half a period before the first measured message is due ({@code source} has started). */
    void publishingStarted(MessageSource source) {
        long period = Math.max(1, Math.round(1e9 / s.rate));
        sampler.scrapeAt(source.startNanos() + s.warmupMessages() * period - period / 2);
    }

    /**
     * Ends sampling: records the measured window ({@link System#nanoTime} instants, 0 when there was none), scrapes a
     * last time and fills {@code r.brokerStages}.
     */
    void finish(ModeResult r, long windowFrom, long windowTo) {
        if (windowFrom > 0 && windowTo > windowFrom) {
            sampler.window(windowFrom, windowTo);
        }
        series = sampler.finish();
        r.brokerStages = StageBreakdown.of(series);
    }

    /** Seconds on the series' clock of a {@link System#nanoTime} instant. */
    double secondsAt(long nanos) {
        return sampler.secondsAt(nanos);
    }

    /** The series once {@link #finish} ran, else null. */
    MetricsSeries series() {
        return series;
    }

    /** Stops the sampler if {@link #finish} did not run. */
    void close() {
        sampler.close();
    }
}
