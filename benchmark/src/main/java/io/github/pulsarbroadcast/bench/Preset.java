package io.github.pulsarbroadcast.bench;

import io.github.pulsarbroadcast.bench.core.Mode;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * Named workloads. A preset changes some of the built-in defaults of {@link BenchSettings}; every command-line flag
 * still overrides it.
 *
 * <p>Threading: immutable; any thread.
 */
public enum Preset {
    /** Small and fast: the smoke test and a first look. */
    QUICK("quick", "20 consumers, every mode, 1 KB at 10 msg/s, 1 s + 3 s; one 1 GB broker; under a minute", s -> {
                s.consumers = List.of(20);
                s.messageSize = 1024;
                s.rate = 10;
                s.warmupSeconds = 1;
                s.durationSeconds = 3;
                s.connectTimeoutSeconds = 60;
                s.drainTimeoutSeconds = 15;
                s.drainIdleSeconds = 3;
                s.brokerHeap = "1g";
                s.brokerDirectMemory = "1g";
                s.freshBroker = false;
                s.primeConsumers = 0;
                s.baselineSeconds = 1;
                s.lateGraceSeconds = 2;
            }),
    /** NTT's experiment scaled to one small machine. */
    NTT_SCALED("ntt-scaled", "N = 1K, 5K, 10K, 20K; every mode; 10 KB at 1 msg/s; 10 s warm-up + 60 s measured", s -> {
        s.consumers = List.of(1_000, 5_000, 10_000, 20_000);
        s.messageSize = 10 * 1024;
        s.rate = 1;
        s.warmupSeconds = 10;
        s.durationSeconds = 60;
    }),
    /** NTT's goal: 100,000 consumers of one topic. */
    HUNDRED_K("100k", "100,000 broadcast consumers; 1 KB at 1 msg/s; 10 s + 60 s; 5,000 consumers per client", s -> {
                s.consumers = List.of(100_000);
                s.modes = List.of(Mode.BROADCAST);
                s.messageSize = 1024;
                s.rate = 1;
                s.consumersPerClient = 5_000;
                s.connectTimeoutSeconds = 1_200;
            }),
    /** NTT's 4 x 25K experiment: one broadcast subscription against four. */
    SPLIT("split", "1 x N against 4 x N/4 broadcast subscriptions; N = 20K, 100K; 1 KB at 1 msg/s; 60 s",
            s -> {
                s.consumers = List.of(20_000, 100_000);
                s.modes = List.of(Mode.BROADCAST, Mode.SPLIT);
                s.splitSubscriptions = 4;
                s.messageSize = 1024;
                s.rate = 1;
                s.consumersPerClient = 5_000;
                s.connectTimeoutSeconds = 1_200;
            }),
    /**
     * The highest sustained deliveries per second: the fleet, rates stepped up on the same consumers until P99 passes
     * 1 s or deliveries fall behind.
     */
    CAPACITY("capacity", "fleet; broadcast at 10K (one connection each) and 100K (multiplexed), one subscription"
            + " each at 10K; 1 KB; 1, 2, 5, 10, 20, 50, ... msg/s, 30 s a step, until P99 > 1 s or deliveries fall"
            + " behind, then 60 s back at the highest rate that passed", s -> {
                s.client = "fleet";
                s.consumers = List.of(10_000, 100_000);
                s.modes = List.of(Mode.BROADCAST, Mode.SUBSCRIPTIONS);
                s.consumersPerConnection = 0;
                s.messageSize = 1024;
                s.capacityRates = List.of(1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1_000.0, 2_000.0,
                        5_000.0);
                s.stockMaxConsumers = 10_000;
                s.connectTimeoutSeconds = 1_200;
                s.skipAfterFailure = false;
                s.capacityStepDownSeconds = 60;
            }),
    /** Slow consumers: 20% pause for 30 s, then catch up while the others go on. */
    BACKLOG("backlog", "5,000 consumers, broadcast + subscriptions, 1 KB at 5 msg/s, 120 s; 20% pause 30 s, catch up",
            s -> {
                s.consumers = List.of(5_000);
                s.modes = List.of(Mode.BROADCAST, Mode.SUBSCRIPTIONS);
                s.messageSize = 1024;
                s.rate = 5;
                s.durationSeconds = 120;
                s.pauseFraction = 0.2;
                s.pauseSeconds = 30;
                s.pauseAfterSeconds = 30;
            });

    private final String cliName;
    private final String summary;
    private final Consumer<BenchSettings> changes;

    Preset(String cliName, String summary, Consumer<BenchSettings> changes) {
        this.cliName = cliName;
        this.summary = summary;
        this.changes = changes;
    }

    public String cliName() {
        return cliName;
    }

    public String summary() {
        return summary;
    }

    /** The built-in defaults changed by this preset. */
    public BenchSettings settings() {
        BenchSettings s = new BenchSettings();
        s.preset = cliName;
        changes.accept(s);
        return s;
    }

    public static Preset parse(String name) {
        String wanted = name.trim().toLowerCase(Locale.ROOT);
        for (Preset p : values()) {
            if (p.cliName.equals(wanted)) {
                return p;
            }
        }
        throw new IllegalArgumentException("unknown preset '" + name + "'; presets: " + names());
    }

    public static String names() {
        return Arrays.stream(values()).map(Preset::cliName).collect(Collectors.joining(", "));
    }
}
