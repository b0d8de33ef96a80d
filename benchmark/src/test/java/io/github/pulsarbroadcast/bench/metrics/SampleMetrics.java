package io.github.pulsarbroadcast.bench.metrics;

import java.util.List;
import java.util.Locale;

/**
 * A broker's {@code /metrics} body written by hand after the metric specification of issue 14 (the plugin's metrics
 * for one broadcast subscription and one executor thread, stock topic metrics, another topic's samples that a
 * sampler must leave out), at "time" {@code k}: every counter grows with k, and every stage histogram gets 10
 * observations per step, all in the bucket (1, 5] ms for the first stage, (20, 50] for the last.
 *
 * <p>Threading: stateless.
 */
final class SampleMetrics {

    static final String TOPIC = "persistent://public/default/bench-t";
    static final String OTHER = "persistent://public/default/other";
    static final List<String> LE = List.of("0.5", "1", "5", "10", "20", "50", "100", "200", "500", "1000", "2000",
            "5000", "+Inf");

    private SampleMetrics() {
    }

    static String body(int k) {
        StringBuilder b = new StringBuilder();
        family(b, "pulsar_broadcast_consumers", "gauge");
        b.append(sub(TOPIC, "pulsar_broadcast_consumers", "state=\"waiting\"", 18));
        b.append(sub(TOPIC, "pulsar_broadcast_consumers", "state=\"catching_up\"", 2));
        b.append(sub(OTHER, "pulsar_broadcast_consumers", "state=\"waiting\"", 999));
        family(b, "pulsar_broadcast_messages_delivered_total", "counter");
        b.append(sub(TOPIC, "pulsar_broadcast_messages_delivered_total", null, 200.0 * k));
        b.append(sub(OTHER, "pulsar_broadcast_messages_delivered_total", null, 5e6 * k));
        family(b, "pulsar_broadcast_consumer_lag_entries", "gauge");
        b.append(sub(TOPIC, "pulsar_broadcast_consumer_lag_entries", "quantile=\"0.5\"", 1));
        b.append(sub(TOPIC, "pulsar_broadcast_consumer_lag_entries", "quantile=\"0.99\"", 3));
        b.append(sub(TOPIC, "pulsar_broadcast_consumer_lag_entries", "quantile=\"1\"", 4));
        family(b, "pulsar_broadcast_stage_latency_ms", "histogram");
        histogram(b, "pulsar_broadcast_stage_latency_ms", "stage=\"receive_to_persisted\"", "5", 10 * k);
        histogram(b, "pulsar_broadcast_stage_latency_ms", "stage=\"persisted_to_dispatch\"", "0.5", 10 * k);
        histogram(b, "pulsar_broadcast_stage_latency_ms", "stage=\"dispatch_to_first_write\"", "1", 10 * k);
        histogram(b, "pulsar_broadcast_stage_latency_ms", "stage=\"dispatch_to_last_write\"", "50", 10 * k);
        family(b, "pulsar_broadcast_fanout_pass_ms", "histogram");
        histogram(b, "pulsar_broadcast_fanout_pass_ms", null, "10", 10 * k);
        family(b, "pulsar_broadcast_executor_task_ms_total", "counter");
        b.append(String.format(Locale.ROOT, "pulsar_broadcast_executor_task_ms_total{cluster=\"standalone\","
                + "thread=\"broadcast-dispatch-0\"} %.1f%n", 50.0 * k));
        b.append("# TYPE pulsar_rate_in gauge\n");
        b.append("pulsar_rate_in{cluster=\"standalone\",namespace=\"public/default\",topic=\"" + TOPIC + "\"} 10.0\n");
        b.append("pulsar_rate_in{cluster=\"standalone\",namespace=\"public/default\",topic=\"" + OTHER + "\"} 7.0\n");
        b.append("# TYPE process_cpu_seconds_total counter\n");
        b.append(String.format(Locale.ROOT, "process_cpu_seconds_total %.3e%n", 1.5 * k));
        b.append("jvm_memory_bytes_used{area=\"heap\",} 1.2E8\njvm_memory_bytes_used{area=\"nonheap\",} 9.0E7\n");
        b.append("jvm_threads_current 77.0\n");
        return b.toString();
    }

    private static void family(StringBuilder b, String name, String type) {
        b.append("# HELP ").append(name).append(" Written by the test \"as the spec says\"\n");
        b.append("# TYPE ").append(name).append(' ').append(type).append('\n');
    }

    private static String sub(String topic, String name, String extra, double value) {
        return String.format(Locale.ROOT, "%s{cluster=\"standalone\",namespace=\"public/default\",topic=\"%s\","
                + "subscription=\"broadcast\"%s} %s%n", name, topic, extra == null ? "" : "," + extra, value);
    }

    /** Cumulative buckets with all {@code count} observations in the bucket whose bound is {@code le}. */
    private static void histogram(StringBuilder b, String name, String extra, String le, int count) {
        int at = LE.indexOf(le);
        for (int i = 0; i < LE.size(); i++) {
            b.append(sub(TOPIC, name + "_bucket", (extra == null ? "" : extra + ",") + "le=\"" + LE.get(i) + "\"",
                    i >= at ? count : 0));
        }
        b.append(sub(TOPIC, name + "_sum", extra, count * 3.0));
        b.append(sub(TOPIC, name + "_count", extra, count));
    }
}
