package io.github.pulsarbroadcast.broadcast;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;

/**
 * The plugin's configuration: every key lives in broker.conf under the prefix {@value #PREFIX} and is documented,
 * with its default, in {@code docs/configuration.md}.
 *
 * <p>Threading: immutable once built; safe to share between threads.
 */
public final class BroadcastConfig {

    /** All plugin keys start with this prefix (camelCase like the broker's own keys, so they can be set from
     *  environment variables by the Pulsar image's {@code PULSAR_PREFIX_} mechanism). */
    public static final String PREFIX = "broadcast";

    static final String ENABLED = PREFIX + "Enabled";
    static final String EXECUTOR_THREADS = PREFIX + "ExecutorThreads";
    static final String EXECUTOR_SLOW_TASK_MS = PREFIX + "ExecutorSlowTaskMs";
    static final String RECONNECT_GRACE_SECONDS = PREFIX + "ReconnectGraceSeconds";
    static final String MAX_READ_BATCH = PREFIX + "MaxReadBatchSize";
    static final String WINDOW_MAX_ENTRIES = PREFIX + "WindowMaxEntries";
    static final String WINDOW_MAX_BYTES = PREFIX + "WindowMaxBytes";
    static final String WINDOW_BROKER_MAX_BYTES = PREFIX + "WindowBrokerMaxBytes";
    static final String MARK_DELETE_INTERVAL_MS = PREFIX + "MarkDeleteIntervalMs";
    static final String STATS_INTERVAL_MS = PREFIX + "StatsIntervalMs";
    static final String MAX_ACK_RANGES = PREFIX + "MaxAckRangesPerConsumer";
    static final String MAX_PENDING_ACKS = PREFIX + "MaxPendingAcksPerConnection";
    static final String ACKS_ON_EVENT_LOOP = PREFIX + "AcksOnEventLoop";
    static final String POSITION_SYNC_INTERVAL_MS = PREFIX + "PositionSyncIntervalMs";
    static final String CONSUMER_RETENTION_SECONDS = PREFIX + "ConsumerRetentionSeconds";
    static final String BUSY_NAME_WAIT_MS = PREFIX + "BusyNameWaitMs";

    /** Every key with its range, in documentation order; the default is computed in {@link #from}. */
    private static final Map<String, long[]> RANGES = new LinkedHashMap<>();

    static {
        RANGES.put(ENABLED, null);
        RANGES.put(EXECUTOR_THREADS, new long[] {1, 1024});
        RANGES.put(EXECUTOR_SLOW_TASK_MS, new long[] {0, 3_600_000});
        RANGES.put(RECONNECT_GRACE_SECONDS, new long[] {0, 86_400});
        RANGES.put(MAX_READ_BATCH, new long[] {1, 10_000});
        RANGES.put(WINDOW_MAX_ENTRIES, new long[] {1, 1_000_000});
        RANGES.put(WINDOW_MAX_BYTES, new long[] {1, Long.MAX_VALUE});
        RANGES.put(WINDOW_BROKER_MAX_BYTES, new long[] {1, Long.MAX_VALUE});
        RANGES.put(MARK_DELETE_INTERVAL_MS, new long[] {10, 3_600_000});
        RANGES.put(STATS_INTERVAL_MS, new long[] {10, 3_600_000});
        RANGES.put(MAX_ACK_RANGES, new long[] {1, 1_000_000});
        RANGES.put(MAX_PENDING_ACKS, new long[] {1, 10_000_000});
        RANGES.put(ACKS_ON_EVENT_LOOP, null);
        RANGES.put(POSITION_SYNC_INTERVAL_MS, new long[] {0, 3_600_000});
        RANGES.put(CONSUMER_RETENTION_SECONDS, new long[] {0, 31_536_000});
        RANGES.put(BUSY_NAME_WAIT_MS, new long[] {0, 25_000});
    }

    private final boolean enabled;
    private final int executorThreads;
    private final long executorSlowTaskMs;
    private final int reconnectGraceSeconds;
    private final int maxReadBatchSize;
    private final int windowMaxEntries;
    private final long windowMaxBytes;
    private final long windowBrokerMaxBytes;
    private final long markDeleteIntervalMs;
    private final long statsIntervalMs;
    private final int maxAckRangesPerConsumer;
    private final int maxPendingAcksPerConnection;
    private final boolean acksOnEventLoop;
    private final long positionSyncIntervalMs;
    private final long consumerRetentionSeconds;
    private final long busyNameWaitMs;

    private BroadcastConfig(Properties p) {
        this.enabled = parseBoolean(p, ENABLED, true);
        this.executorThreads = (int) parseLong(p, EXECUTOR_THREADS, Runtime.getRuntime().availableProcessors());
        this.executorSlowTaskMs = parseLong(p, EXECUTOR_SLOW_TASK_MS, 100);
        this.reconnectGraceSeconds = (int) parseLong(p, RECONNECT_GRACE_SECONDS, 60);
        this.maxReadBatchSize = (int) parseLong(p, MAX_READ_BATCH, 100);
        this.windowMaxEntries = (int) parseLong(p, WINDOW_MAX_ENTRIES, 1000);
        this.windowMaxBytes = parseLong(p, WINDOW_MAX_BYTES, 64L * 1024 * 1024);
        this.windowBrokerMaxBytes = parseLong(p, WINDOW_BROKER_MAX_BYTES, 256L * 1024 * 1024);
        this.markDeleteIntervalMs = parseLong(p, MARK_DELETE_INTERVAL_MS, 1000);
        this.statsIntervalMs = parseLong(p, STATS_INTERVAL_MS, 5000);
        this.maxAckRangesPerConsumer = (int) parseLong(p, MAX_ACK_RANGES, 1000);
        this.maxPendingAcksPerConnection = (int) parseLong(p, MAX_PENDING_ACKS, 50_000);
        this.acksOnEventLoop = parseBoolean(p, ACKS_ON_EVENT_LOOP, true);
        this.positionSyncIntervalMs = parseLong(p, POSITION_SYNC_INTERVAL_MS, 5000);
        this.consumerRetentionSeconds = parseLong(p, CONSUMER_RETENTION_SECONDS, 86_400);
        this.busyNameWaitMs = parseLong(p, BUSY_NAME_WAIT_MS, 5_000);
    }

    /** The defaults, as documented. */
    public static BroadcastConfig defaults() {
        return from(new Properties());
    }

    /**
     * Reads the plugin keys from the broker's properties (broker.conf keys that the broker itself does not know land
     * there). Unknown keys under the prefix are rejected so that a typo does not silently fall back to a default.
     *
     * @throws IllegalArgumentException naming the key and what is allowed
     */
    public static BroadcastConfig from(Properties properties) {
        for (String name : properties.stringPropertyNames()) {
            if (name.startsWith(PREFIX) && !RANGES.containsKey(name)) {
                throw new IllegalArgumentException("Unknown pulsar-broadcast configuration key '" + name
                        + "'; known keys: " + String.join(", ", RANGES.keySet()));
            }
        }
        return new BroadcastConfig(properties);
    }

    /** Every key the plugin reads, in documentation order. */
    public static java.util.Set<String> keys() {
        return java.util.Collections.unmodifiableSet(RANGES.keySet());
    }

    /** Whether broadcast subscriptions are served; when false every command goes to stock Pulsar. */
    public boolean enabled() {
        return enabled;
    }

    /** Threads of the subscription-keyed executor that runs broadcast dispatch work. */
    public int executorThreads() {
        return executorThreads;
    }

    /** Executor tasks that run longer are counted in the metrics and warned about; 0 turns this off. */
    public long executorSlowTaskMs() {
        return executorSlowTaskMs;
    }

    /**
     * The recovery window: how long after a subscription is loaded without readable saved positions (or reset by an
     * operator) joining consumers start at its mark-delete position.
     */
    public int reconnectGraceSeconds() {
        return reconnectGraceSeconds;
    }

    /**
     * How often, at most, each consumer's acknowledged position is saved (0: never; consumers then resume at the
     * mark-delete position after a topic move, within the recovery window). The periodic mark-delete sync checks it,
     * so it takes effect in steps of {@link #markDeleteIntervalMs}.
     */
    public long positionSyncIntervalMs() {
        return positionSyncIntervalMs;
    }

    /**
     * How long a disconnected consumer's position is kept (holding the backlog) for a reconnect with the same
     * consumer name, across broker restarts when positions are saved; 0 drops it at once.
     */
    public long consumerRetentionSeconds() {
        return consumerRetentionSeconds;
    }

    /** Most entries one storage read asks for. */
    public int maxReadBatchSize() {
        return maxReadBatchSize;
    }

    /** Most entries the per-subscription window of recently read entries holds. */
    public int windowMaxEntries() {
        return windowMaxEntries;
    }

    /** Most payload bytes that window holds. */
    public long windowMaxBytes() {
        return windowMaxBytes;
    }

    /** Most payload bytes all windows of the broker hold together. */
    public long windowBrokerMaxBytes() {
        return windowBrokerMaxBytes;
    }

    /** How often the subscription's durable mark-delete position is brought up to the slowest consumer. */
    public long markDeleteIntervalMs() {
        return markDeleteIntervalMs;
    }

    /**
     * How often the broadcast consumers' delivery counters are copied into the stock consumer stats that
     * {@code pulsar-admin topics stats} and the metrics show (off the dispatch thread).
     */
    public long statsIntervalMs() {
        return statsIntervalMs;
    }

    /**
     * Most ranges of individually acknowledged messages kept per consumer above its cumulative position; an
     * individual ack that would need one more is not recorded (the message is sent again on the consumer's next
     * redelivery or reconnect).
     */
    public int maxAckRangesPerConsumer() {
        return maxAckRangesPerConsumer;
    }

    /**
     * Most ack commands of one connection waiting to be applied; beyond it the broker stops reading from that
     * connection until half of them are applied (TCP back-pressure, as stock acks on the event loop have).
     */
    public int maxPendingAcksPerConnection() {
        return maxPendingAcksPerConnection;
    }

    /**
     * Whether acknowledgements are applied on the connection's event loop, as stock Pulsar applies them (true), or
     * handed to a random executor thread each, NTT's design (false).
     */
    public boolean acksOnEventLoop() {
        return acksOnEventLoop;
    }

    private static boolean parseBoolean(Properties p, String key, boolean def) {
        String v = p.getProperty(key);
        if (v == null || v.isBlank()) {
            return def;
        }
        v = v.trim();
        if (v.equalsIgnoreCase("true") || v.equalsIgnoreCase("false")) {
            return Boolean.parseBoolean(v);
        }
        throw new IllegalArgumentException(key + "=" + v + " is not allowed: use true or false");
    }

    private static long parseLong(Properties p, String key, long def) {
        String v = p.getProperty(key);
        if (v == null || v.isBlank()) {
            return def;
        }
        long[] range = RANGES.get(key);
        try {
            long value = Long.parseLong(v.trim());
            if (value >= range[0] && value <= range[1]) {
                return value;
            }
        } catch (NumberFormatException e) {
            // fall through to the error below
        }
        throw new IllegalArgumentException(key + "=" + v.trim() + " is not allowed: use a whole number from "
                + range[0] + " to " + range[1]);
    }

    /**
     * How long a subscribe whose consumer name is held by a connected consumer waits for the name to be released:
     * the holder's connection, if another one, is pinged and closed as dead when it does not answer within this time;
     * one that answers keeps the name and the subscribe is refused at once. 0 refuses at once. At most 25 s, so that
     * the wait (plus the second it may take to remove a dead connection's consumers) ends before the Java client's
     * default operation timeout of 30 s.
     */
    public long busyNameWaitMs() {
        return busyNameWaitMs;
    }

    @Override
    public String toString() {
        return ENABLED + "=" + enabled + ", " + EXECUTOR_THREADS + "=" + executorThreads + ", "
                + EXECUTOR_SLOW_TASK_MS + "=" + executorSlowTaskMs + ", "
                + RECONNECT_GRACE_SECONDS + "=" + reconnectGraceSeconds + ", " + MAX_READ_BATCH + "="
                + maxReadBatchSize + ", " + WINDOW_MAX_ENTRIES + "=" + windowMaxEntries + ", " + WINDOW_MAX_BYTES
                + "=" + windowMaxBytes + ", " + WINDOW_BROKER_MAX_BYTES + "=" + windowBrokerMaxBytes + ", "
                + MARK_DELETE_INTERVAL_MS + "=" + markDeleteIntervalMs + ", "
                + STATS_INTERVAL_MS + "=" + statsIntervalMs + ", " + MAX_ACK_RANGES + "=" + maxAckRangesPerConsumer
                + ", " + MAX_PENDING_ACKS + "=" + maxPendingAcksPerConnection + ", " + ACKS_ON_EVENT_LOOP + "="
                + acksOnEventLoop + ", " + POSITION_SYNC_INTERVAL_MS + "="
                + positionSyncIntervalMs + ", " + CONSUMER_RETENTION_SECONDS + "=" + consumerRetentionSeconds + ", "
                + BUSY_NAME_WAIT_MS + "=" + busyNameWaitMs;
    }
}
