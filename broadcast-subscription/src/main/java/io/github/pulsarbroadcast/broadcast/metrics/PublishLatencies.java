package io.github.pulsarbroadcast.broadcast.metrics;

import java.util.concurrent.ConcurrentHashMap;

/**
 * The "broker receive to persisted" stage of every topic that has a broadcast subscription on this broker: the time
 * from the broker reading a publish off the connection to the write being persisted and its receipt ready (what
 * stock Pulsar records as the topic's add latency, {@code pulsar_storage_write_latency}), recorded from the broker
 * interceptor's {@code messageProduced} callback. Topics without a broadcast subscription cost one map lookup per
 * publish and record nothing.
 *
 * <p>Threading: any thread. Registrations are counted per topic (one per broadcast subscription), so the histogram
 * lives while any broadcast subscription of the topic is open on this broker.
 */
public final class PublishLatencies {

    private static final class Registration {
        final LatencyHistogram histogram = new LatencyHistogram();
        /** Guarded by the map's compute for this key. */
        int users;
    }

    private final ConcurrentHashMap<String, Registration> byTopic = new ConcurrentHashMap<>();

    /** A broadcast subscription of {@code topic} opened: returns the topic's histogram (its subscriptions share it). */
    public LatencyHistogram register(String topic) {
        return byTopic.compute(topic, (t, r) -> {
            Registration reg = r == null ? new Registration() : r;
            reg.users++;
            return reg;
        }).histogram;
    }

    /** A broadcast subscription of {@code topic} closed. */
    public void unregister(String topic) {
        byTopic.computeIfPresent(topic, (t, r) -> --r.users <= 0 ? null : r);
    }

    /** A publish on {@code topic} took {@code nanos} from receive to persisted. */
    public void record(String topic, long nanos) {
        Registration r = byTopic.get(topic);
        if (r != null) {
            r.histogram.recordNanos(nanos);
        }
    }

    /** Topics with at least one registration (for tests). */
    public int topics() {
        return byTopic.size();
    }
}
