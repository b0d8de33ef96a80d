/**
 * Instruments the dispatch path records into: fixed-bucket latency histograms ({@link
 * io.github.pulsarbroadcast.broadcast.metrics.LatencyHistogram}) and the timing of one fan-out pass until its last
 * connection has written ({@link io.github.pulsarbroadcast.broadcast.metrics.PassTiming}). It depends on nothing
 * else of the plugin; the {@code prometheus} package writes what is recorded here.
 */
package io.github.pulsarbroadcast.broadcast.metrics;
