/**
 * {@code bin/pulsar-broadcast bench}: the benchmark that reproduces NTT's "100K consumers on one Pulsar topic"
 * experiment. One producer publishes to one topic at a fixed rate while N consumers receive every message, once
 * per <em>mode</em>: the broadcast subscription, one Exclusive subscription per consumer, one Reader per consumer,
 * a non-persistent topic, and K broadcast subscriptions of N/K consumers each. The broker runs in a JVM of its own
 * ({@link io.github.pulsarbroadcast.bench.ForkedBroker}) so that its CPU and memory are measured apart from the
 * clients'.
 *
 * <p>Flow: {@link io.github.pulsarbroadcast.bench.BenchCommand} (options, presets) builds
 * {@link io.github.pulsarbroadcast.bench.BenchSettings}; {@link io.github.pulsarbroadcast.bench.BenchRunner} runs
 * every (N, mode) pair as a {@link io.github.pulsarbroadcast.bench.ModeRun} and hands the
 * {@link io.github.pulsarbroadcast.bench.ModeResult}s to {@link io.github.pulsarbroadcast.bench.ReportWriter}
 * (results.json, results.md, per-consumer CSV) and {@link io.github.pulsarbroadcast.bench.Charts} (PNG).
 */
package io.github.pulsarbroadcast.bench;
