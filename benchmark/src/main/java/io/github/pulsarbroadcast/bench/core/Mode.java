package io.github.pulsarbroadcast.bench.core;

import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The ways N consumers can each get every message of one topic. Each mode runs on a fresh topic.
 *
 * <p>Threading: immutable; any thread.
 */
public enum Mode {
    /** One broadcast subscription shared by all N consumers (needs the plugin). */
    BROADCAST("broadcast", true, true, true, "one broadcast subscription, N consumers"),
    /** One Exclusive subscription per consumer: NTT's stock baseline. */
    SUBSCRIPTIONS("subscriptions", false, true, true, "one Exclusive subscription per consumer"),
    /** One non-durable Reader per consumer. */
    READERS("readers", false, true, false, "one Reader per consumer"),
    /** A non-persistent topic, one Exclusive subscription per consumer (messages may be dropped). */
    NON_PERSISTENT("non-persistent", false, false, true, "non-persistent topic, one subscription per consumer"),
    /** K broadcast subscriptions of N/K consumers each: NTT's 4 x 25K experiment (needs the plugin). */
    SPLIT("split", true, true, true, "K broadcast subscriptions of N/K consumers"),
    /**
     * No broker at all: a trivial server in a JVM of its own writes the same MESSAGE frames at the same rate to every
     * consumer and reads their acknowledgements (the machine's floor for the workload).
     */
    FLOOR("floor", false, false, false, "no broker: a trivial server writing the frames (the machine's floor)");

    /** The modes a run without {@code --modes} measures: every mode that talks to a broker. */
    public static final List<Mode> BROKER_MODES = List.of(BROADCAST, SUBSCRIPTIONS, READERS, NON_PERSISTENT, SPLIT);

    private final String cliName;
    private final boolean needsPlugin;
    private final boolean persistent;
    private final boolean canPause;
    private final String description;

    Mode(String cliName, boolean needsPlugin, boolean persistent, boolean canPause, String description) {
        this.cliName = cliName;
        this.needsPlugin = needsPlugin;
        this.persistent = persistent;
        this.canPause = canPause;
        this.description = description;
    }

    /** The name used on the command line and in reports. */
    @JsonValue
    public String cliName() {
        return cliName;
    }

    /** True when the mode uses broadcast subscriptions, which a broker without the plugin does not have. */
    public boolean needsPlugin() {
        return needsPlugin;
    }

    public boolean persistent() {
        return persistent;
    }

    /**
     * True when its consumers can be paused ({@code Consumer.pause()}) for the backlog experiment. Readers have no
     * pause in the 2.10 client, and a paused consumer of a non-persistent topic loses messages by design.
     */
    public boolean canPause() {
        return canPause && persistent;
    }

    public String description() {
        return description;
    }

    /** True when the mode's consumers subscribe to the broadcast subscription (or several of them). */
    public boolean broadcast() {
        return this == BROADCAST || this == SPLIT;
    }

    /** Subscriptions that {@code n} consumers use in this mode (readers count as one each). */
    public int subscriptions(int n, int split) {
        switch (this) {
            case BROADCAST:
                return 1;
            case SPLIT:
                return Math.min(split, n);
            default:
                return n;
        }
    }

    /**
     * The subscription name of consumer {@code index} when the mode uses {@code subscriptions} of them (see
     * {@link #subscriptions}); null for readers, whose non-durable subscriptions get random names as the stock
     * client gives them.
     */
    public String subscription(int index, int subscriptions) {
        switch (this) {
            case BROADCAST:
                return "broadcast";
            case SPLIT:
                return "broadcast-" + (index % subscriptions);
            case READERS:
                return null;
            default:
                return "sub-" + index;
        }
    }

    /** Parses a command-line name such as {@code non-persistent}. */
    public static Mode parse(String name) {
        String wanted = name.trim().toLowerCase(Locale.ROOT);
        for (Mode m : values()) {
            if (m.cliName.equals(wanted)) {
                return m;
            }
        }
        throw new IllegalArgumentException("unknown mode '" + name + "'; modes: " + names());
    }

    /** All command-line names, comma-separated. */
    public static String names() {
        return Arrays.stream(values()).map(Mode::cliName).collect(Collectors.joining(", "));
    }

    @Override
    public String toString() {
        return cliName;
    }
}
