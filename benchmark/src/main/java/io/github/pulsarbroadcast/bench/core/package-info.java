/**
 * What every benchmark client records, whichever client it is (the stock Java client in the benchmark JVM or the
 * consumer fleet in processes of its own): the modes, each consumer's {@link
 * io.github.pulsarbroadcast.bench.core.ConsumerTracker}, the run's {@link
 * io.github.pulsarbroadcast.bench.core.Deliveries} with its latency histograms and per-message fan-out, and the
 * percentile summaries of the report. Everything here can be written in one JVM and merged in another.
 *
 * <p>Depends on nothing else of the benchmark.
 */
package io.github.pulsarbroadcast.bench.core;
