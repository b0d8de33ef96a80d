package io.github.pulsarbroadcast.bench.metrics;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The panels of the rendered dashboard, computed from a {@link MetricsSeries} with the same expressions as the
 * Grafana dashboard's panels ({@code docker/grafana/pulsar-broadcast.json}): gauges summed over the run's
 * subscriptions, counters as {@code rate()}, histograms as {@code histogram_quantile()} of bucket rates. Rates use
 * a window of 1.5 scrape intervals (each point is the rate since the scrape before it), the finest a short run allows.
 * The last panel has no Grafana twin: the machine's CPU as the benchmark read it at each scrape (all processes, the
 * broker, and what the host stole), to tell a broker that slowed down from a machine that did.
 *
 * <p>Threading: stateless; any thread (each call builds its own {@link SeriesQuery}).
 */
public final class DashboardPanels {

    private static final String P = "pulsar_broadcast_";

    /** One time-series panel: a title, the y axis's unit and named lines over the scrape times. Threading: value. */
    public static final class Panel {
        public final String title;
        public final String unit;
        public final Map<String, double[]> lines = new LinkedHashMap<>();

        Panel(String title, String unit) {
            this.title = title;
            this.unit = unit;
        }

        Panel add(String name, double[] values) {
            if (values != null) {
                lines.put(name, values);
            }
            return this;
        }

        Panel addAll(String prefix, Map<String, double[]> byGroup) {
            byGroup.forEach((g, v) -> lines.put(prefix + g, v));
            return this;
        }
    }

    private DashboardPanels() {
    }

    /** Every panel, in the Grafana dashboard's order. */
    public static List<Panel> build(MetricsSeries series) {
        SeriesQuery q = new SeriesQuery(series);
        double w = Math.max(1, series.intervalSeconds) * 1.5;
        List<Panel> panels = new ArrayList<>();
        panels.add(new Panel("Consumers by state", "consumers").addAll("",
                q.sum(P + "consumers", SeriesQuery.ALL, "state")));
        panels.add(new Panel("Retained positions (disconnected consumers)", "positions")
                .add("retained", one(q.sum(P + "retained_positions", SeriesQuery.ALL))));
        panels.add(new Panel("Deliveries", "messages/s")
                .add("delivered", one(q.rate(P + "messages_delivered_total", SeriesQuery.ALL, w))));
        panels.add(new Panel("Delivered bytes", "MB/s")
                .add("delivered", scale(one(q.rate(P + "bytes_delivered_total", SeriesQuery.ALL, w)), 1e-6)));
        panels.add(new Panel("Acknowledgements", "1/s")
                .add("acks", rate(q, "acks_total", w)).add("rejected", rate(q, "rejected_acks_total", w))
                .add("dropped", rate(q, "dropped_acks_total", w))
                .add("redeliveries", rate(q, "redeliveries_total", w)));
        panels.add(new Panel("Entries read: tail vs catch-up", "entries/s")
                .add("tail", rate(q, "tail_entries_read_total", w))
                .add("catch-up", rate(q, "catchup_entries_read_total", w))
                .add("read failures", rate(q, "read_failures_total", w)));
        panels.add(new Panel("Read window", "entries / KiB")
                .add("entries", one(q.sum(P + "window_entries", SeriesQuery.ALL)))
                .add("KiB", scale(one(q.sum(P + "window_bytes", SeriesQuery.ALL)), 1.0 / 1024)));
        panels.add(new Panel("Consumer lag (max over subscriptions)", "entries")
                .addAll("q=", max(q, P + "consumer_lag_entries", "quantile")));
        panels.add(new Panel("Fan-out pass duration", "ms")
                .add("P50", one(q.quantile(0.5, P + "fanout_pass_ms", SeriesQuery.ALL, w)))
                .add("P99", one(q.quantile(0.99, P + "fanout_pass_ms", SeriesQuery.ALL, w))));
        panels.addAll(brokerPanels(q, w));
        return panels;
    }

    /** The stage, executor and stock panels. */
    private static List<Panel> brokerPanels(SeriesQuery q, double w) {
        List<Panel> panels = new ArrayList<>();
        panels.add(new Panel("Broker stages P50", "ms")
                .addAll("", q.quantile(0.5, StageBreakdown.STAGE_METRIC, SeriesQuery.ALL, w, "stage")));
        panels.add(new Panel("Broker stages P99", "ms")
                .addAll("", q.quantile(0.99, StageBreakdown.STAGE_METRIC, SeriesQuery.ALL, w, "stage")));
        panels.add(new Panel("Executor queue depth", "tasks")
                .addAll("", q.sum(P + "executor_queue_depth", SeriesQuery.ALL, "thread")));
        panels.add(new Panel("Executor busy time", "ms/s")
                .addAll("", q.rate(P + "executor_task_ms_total", SeriesQuery.ALL, w, "thread")));
        panels.add(new Panel("Slow executor tasks", "1/s")
                .addAll("", q.rate(P + "executor_slow_tasks_total", SeriesQuery.ALL, w, "thread")));
        panels.add(new Panel("Moved forward, expired, resumed", "consumers/s")
                .add("moved forward", rate(q, "consumers_moved_forward_total", w))
                .add("retained expired", rate(q, "retained_expired_total", w))
                .add("resumed", rate(q, "resumed_total", w)));
        panels.add(new Panel("Backlog (stock)", "messages")
                .add("topic", one(q.sum("pulsar_msg_backlog", SeriesQuery.ALL)))
                .addAll("sub ", q.sum("pulsar_subscription_back_log", SeriesQuery.ALL, "subscription")));
        panels.add(new Panel("Rate in / out (stock)", "messages/s")
                .add("in", one(q.sum("pulsar_rate_in", SeriesQuery.ALL)))
                .add("out", one(q.sum("pulsar_rate_out", SeriesQuery.ALL))));
        panels.add(new Panel("Broker CPU (stock)", "cores")
                .add("process", one(q.rate("process_cpu_seconds_total", SeriesQuery.ALL, w))));
        // Not a broker metric (no Grafana twin): the benchmark's own reading of the machine at each scrape.
        panels.add(new Panel("Machine CPU (benchmark, /proc/stat)", "cores")
                .add("all processes", one(q.rate(MetricsSampler.MACHINE_BUSY, SeriesQuery.ALL, w)))
                .add("broker", one(q.rate("process_cpu_seconds_total", SeriesQuery.ALL, w)))
                .add("stolen by the host", one(q.rate(MetricsSampler.MACHINE_STOLEN, SeriesQuery.ALL, w))));
        return panels;
    }

    private static double[] rate(SeriesQuery q, String counter, double w) {
        return one(q.rate(P + counter, SeriesQuery.ALL, w));
    }

    /** The single group of an ungrouped query, or null when the metric is absent. */
    private static double[] one(Map<String, double[]> byGroup) {
        return byGroup.isEmpty() ? null : byGroup.values().iterator().next();
    }

    /** {@code max by (label) (name)}. */
    private static Map<String, double[]> max(SeriesQuery q, String name, String label) {
        Map<String, double[]> out = new java.util.TreeMap<>();
        q.series(name, SeriesQuery.ALL).forEach((labels, v) -> {
            double[] m = out.computeIfAbsent(labels.getOrDefault(label, ""), g -> v.clone());
            for (int i = 0; i < v.length; i++) {
                m[i] = Double.isNaN(m[i]) ? v[i] : Double.isNaN(v[i]) ? m[i] : Math.max(m[i], v[i]);
            }
        });
        return out;
    }

    private static double[] scale(double[] v, double factor) {
        if (v == null) {
            return null;
        }
        double[] out = v.clone();
        for (int i = 0; i < out.length; i++) {
            out[i] *= factor;
        }
        return out;
    }
}
