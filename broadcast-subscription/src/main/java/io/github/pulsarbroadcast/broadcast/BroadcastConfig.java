package io.github.pulsarbroadcast.broadcast;

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

    private final boolean enabled;
    private final int executorThreads;

    private BroadcastConfig(boolean enabled, int executorThreads) {
        this.enabled = enabled;
        this.executorThreads = executorThreads;
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
            if (name.startsWith(PREFIX) && !name.equals(ENABLED) && !name.equals(EXECUTOR_THREADS)) {
                throw new IllegalArgumentException("Unknown pulsar-broadcast configuration key '" + name
                        + "'; known keys: " + ENABLED + ", " + EXECUTOR_THREADS);
            }
        }
        boolean enabled = parseBoolean(properties, ENABLED, true);
        int threads = parseInt(properties, EXECUTOR_THREADS, Runtime.getRuntime().availableProcessors(), 1, 1024);
        return new BroadcastConfig(enabled, threads);
    }

    /** Whether broadcast subscriptions are served; when false every command goes to stock Pulsar. */
    public boolean enabled() {
        return enabled;
    }

    /** Threads of the subscription-keyed executor that runs broadcast dispatch work. */
    public int executorThreads() {
        return executorThreads;
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

    private static int parseInt(Properties p, String key, int def, int min, int max) {
        String v = p.getProperty(key);
        if (v == null || v.isBlank()) {
            return def;
        }
        try {
            int value = Integer.parseInt(v.trim());
            if (value >= min && value <= max) {
                return value;
            }
        } catch (NumberFormatException e) {
            // fall through to the error below
        }
        throw new IllegalArgumentException(key + "=" + v.trim() + " is not allowed: use a whole number from "
                + min + " to " + max);
    }

    @Override
    public String toString() {
        return ENABLED + "=" + enabled + ", " + EXECUTOR_THREADS + "=" + executorThreads;
    }
}
