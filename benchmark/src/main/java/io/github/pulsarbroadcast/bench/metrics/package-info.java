/**
 * The broker's own metrics during a benchmark run: {@link io.github.pulsarbroadcast.bench.metrics.MetricsSampler}
 * scrapes the broker's {@code /metrics} (Prometheus text format 0.0.4) every few seconds on a thread of its own and
 * keeps the {@code pulsar_broadcast_*} series of the run's topic and a few stock ones as a
 * {@link io.github.pulsarbroadcast.bench.metrics.MetricsSeries} (written to the results folder as JSON);
 * {@link io.github.pulsarbroadcast.bench.metrics.StageBreakdown} turns the stage histograms of the measured window
 * into P50/P99 per broker stage (NTT's figure 6 for this broker); {@link
 * io.github.pulsarbroadcast.bench.metrics.DashboardImage} renders a PNG grid of panels that mirrors the Grafana
 * dashboard in {@code docker/grafana/}, with rates and histogram quantiles computed as Prometheus computes them
 * ({@link io.github.pulsarbroadcast.bench.metrics.PromMath}). {@link
 * io.github.pulsarbroadcast.bench.metrics.DashboardCommand} renders the PNG again from a saved series file.
 *
 * <p>Depends on nothing else of the benchmark (the report code in the parent package uses it, not the other way).
 */
package io.github.pulsarbroadcast.bench.metrics;
