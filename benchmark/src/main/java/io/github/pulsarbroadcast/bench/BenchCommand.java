package io.github.pulsarbroadcast.bench;

import io.github.pulsarbroadcast.bench.core.Mode;
import io.github.pulsarbroadcast.standalone.BuildVersion;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code pulsar-broadcast bench}: the options, the preset they start from, and the run. Every option left out keeps
 * the preset's value (or the built-in default without {@code --preset}); see {@link Preset}.
 *
 * <p>Threading: picocli fills the fields and calls {@link #call} on the main thread, which runs the whole benchmark.
 */
@Command(name = "pulsar-broadcast bench", mixinStandardHelpOptions = true, versionProvider = BuildVersion.class,
        sortOptions = false, usageHelpWidth = 110,
        subcommands = io.github.pulsarbroadcast.bench.metrics.DashboardCommand.class,
        description = {"One producer, one topic, N consumers: connect times, end-to-end latency, delivery, and the"
                + " broker's CPU and memory, for each mode in turn on a fresh topic. The broker runs in a JVM of its"
                + " own (or use --service-url). Writes results.json, results.md, per-consumer CSV and PNG charts to"
                + " --out, and prints the table.", ""})
public final class BenchCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--preset", paramLabel = "NAME", description = "Start from a preset (listed below); other options"
            + " override it. Without it: 1,000 consumers, every mode, 10 KB at 1 msg/s, 10 s warm-up + 60 s.")
    String preset;

    @Option(names = "--out", paramLabel = "DIR",
            description = "Results folder (default: bench-results/<preset>-<time>).")
    Path out;

    @Option(names = "--consumers", split = ",", paramLabel = "N",
            description = "Consumer counts; every mode runs once per count, smallest first (default 1000).")
    List<Integer> consumers;

    @Option(names = "--modes", split = ",", paramLabel = "MODE", converter = ModeConverter.class,
            description = "Modes in order: broadcast (one broadcast subscription), subscriptions (one Exclusive"
                    + " subscription each, NTT's baseline), readers (one Reader each), non-persistent (non-persistent"
                    + " topic, one subscription each), split (K broadcast subscriptions of N/K), floor (no broker: a"
                    + " trivial server writing the same frames at the same rate). Default: the first five.")
    List<Mode> modes;

    @Option(names = "--message-size", paramLabel = "BYTES", description = "Payload size (default 10240).")
    Integer messageSize;

    @Option(names = "--rate", paramLabel = "MSG/S", description = "Publish rate, messages per second (default 1).")
    Double rate;

    @Option(names = "--warmup", paramLabel = "SECONDS", description = "Publishing before the measured period;"
            + " delivered and counted, but not in the latency figures (default 10).")
    Integer warmup;

    @Option(names = "--duration", paramLabel = "SECONDS", description = "Measured publishing period (default 60).")
    Integer duration;

    @Option(names = "--batching", negatable = true, description = "Producer batching (default off).")
    Boolean batching;

    @Option(names = "--split-subscriptions", paramLabel = "K", description = "K of the split mode (default 4).")
    Integer splitSubscriptions;

    @Option(names = "--consumers-per-client", paramLabel = "N", description = "Consumers sharing one PulsarClient"
            + " (one connection, one I/O and one listener thread) (default 2000).")
    Integer consumersPerClient;

    @Option(names = "--client", paramLabel = "java|fleet", description = "Who simulates the consumers: 'java', the"
            + " stock Java client in the benchmark JVM, or 'fleet', simulated consumers speaking the binary protocol"
            + " (pulsar-common's codec on Netty) in processes of their own, whose CPU is measured apart (default"
            + " java).")
    String client;

    @Option(names = "--connect-rate", paramLabel = "PER_S", description = "Subscribes started per second, over all"
            + " consumers; 0 = as fast as --connect-concurrency allows (default 0).")
    Double connectRate;

    /** The options that shape the consumer fleet ({@code --client fleet}). */
    @Mixin
    FleetOptions fleet = new FleetOptions();

    @Option(names = "--repeat", paramLabel = "K", description = "Run every (N, mode) pair K times, the modes in a"
            + " rotated order each time; the report gives the spread (default 1).")
    Integer repeat;

    @Option(names = "--baseline-seconds", paramLabel = "SECONDS", description = "CPU baselines measured before"
            + " connecting and with everyone connected before publishing, this long each; 0 = none (default 3).")
    Integer baselineSeconds;

    @Option(names = "--late-grace", paramLabel = "SECONDS", description = "When the drain ends with deliveries"
            + " missing, keep counting for this long: those are reported as arrived late, the rest as lost"
            + " (default 5).")
    Integer lateGrace;

    @Option(names = "--capacity-rates", split = ",", paramLabel = "MSG/S", description = "A capacity run: publish"
            + " at each rate in turn on the same consumers (--step-seconds each) until a step's P99 passes"
            + " --capacity-p99 or its deliveries fall behind; reports the highest sustained deliveries per second.")
    List<Double> capacityRates;

    @Option(names = "--step-seconds", paramLabel = "SECONDS", description = "Length of a capacity step (default 30).")
    Integer stepSeconds;

    @Option(names = "--capacity-p99", paramLabel = "MS", description = "A capacity step fails above this P99 (default"
            + " 1000).")
    Long capacityP99;

    @Option(names = "--step-down-seconds", paramLabel = "SECONDS", description = "After the capacity step that fails,"
            + " publish this long at the highest rate that passed and report when the latency returned to its"
            + " earlier level; 0 = no step back down (default 0; the capacity preset: 60).")
    Integer stepDownSeconds;

    @Option(names = "--stock-max-consumers", paramLabel = "N", description = "Run the modes without the plugin only up"
            + " to N consumers; 0 = always (default 0; the capacity preset: 10000).")
    Integer stockMaxConsumers;

    @Option(names = "--receiver-queue", paramLabel = "N", description = "Each consumer's receiver queue (default 10).")
    Integer receiverQueue;

    @Option(names = "--ack-group-ms", paramLabel = "MS", description = "Acknowledgement grouping time; 0 sends each"
            + " acknowledgement at once and saves a flush timer per consumer (default 0).")
    Integer ackGroupMs;

    @Option(names = "--connect-concurrency", paramLabel = "N", description = "Subscribe requests in flight at once"
            + " (default 1000).")
    Integer connectConcurrency;

    @Option(names = "--connect-timeout", paramLabel = "SECONDS", description = "Give a mode up when its consumers are"
            + " not all connected by then; the report says how many were (default 600).")
    Integer connectTimeout;

    @Option(names = "--drain-timeout", paramLabel = "SECONDS", description = "After the last publish, wait at most"
            + " this long for every delivery; what is missing then counts as lost (default 60).")
    Integer drainTimeout;

    @Option(names = "--drain-idle", paramLabel = "SECONDS", description = "End the drain early when nothing arrived"
            + " for this long (default 10).")
    Integer drainIdle;

    @Option(names = "--pause-fraction", paramLabel = "F", description = "Backlog experiment: this fraction of the"
            + " consumers pause, then catch up (modes broadcast, subscriptions, split); 0 = off (default 0).")
    Double pauseFraction;

    @Option(names = "--pause-seconds", paramLabel = "SECONDS", description = "How long they pause (default 30).")
    Integer pauseSeconds;

    @Option(names = "--pause-after", paramLabel = "SECONDS", description = "When the pause starts, after the start of"
            + " the measured period (default 30).")
    Integer pauseAfter;

    @Option(names = "--move-topic-after", paramLabel = "SECONDS", description = "A topic move: this long into the"
            + " measured period the topic is unloaded (as a load balancer moves it) and every consumer reconnects;"
            + " reports when all were subscribed again and each consumer's duplicates. Fleet only; 0 = none"
            + " (default 0).")
    Integer moveTopicAfter;

    @Option(names = "--move-command", paramLabel = "COMMAND", description = "With --move-topic-after: run this shell"
            + " command instead of the unload ({topic} is replaced by the topic's full name; output in"
            + " move-command.log), for example a kill -9 of the owning broker of a local cluster:"
            + " 'bin/pulsar-broadcast cluster kill $(bin/pulsar-broadcast cluster owner --topic {topic})'.")
    String moveCommand;

    @Option(names = "--broker", paramLabel = "plugin|stock", description = "The broker JVM to start: 'plugin' (the"
            + " standalone with the broadcast plugin) or 'stock' (--no-plugin; broadcast modes are skipped)"
            + " (default plugin).")
    String broker;

    @Option(names = "--broker-heap", paramLabel = "SIZE", description = "Broker JVM -Xmx (default 6g).")
    String brokerHeap;

    @Option(names = "--broker-direct-memory", paramLabel = "SIZE", description = "Broker JVM"
            + " -XX:MaxDirectMemorySize (default 4g).")
    String brokerDirectMemory;

    @Option(names = "--broker-java-opts", paramLabel = "OPTS", description = "More broker JVM options,"
            + " space-separated.")
    String brokerJavaOpts;

    @Option(names = "--broker-config", paramLabel = "FILE", description = "broker.conf keys added to the generated"
            + " broker configuration (for example broadcastExecutorThreads=2).")
    Path brokerConfig;

    @Option(names = "--fresh-broker", negatable = true, description = "Start a new broker JVM for every run, so"
            + " CPU and memory figures are the run's alone (default on; the quick preset turns it off).")
    Boolean freshBroker;

    @Option(names = "--skip-after-failure", negatable = true, description = "Once a mode failed at some N, skip it"
            + " at larger N (default on).")
    Boolean skipAfterFailure;

    @Option(names = "--service-url", paramLabel = "URL", description = "Use this existing cluster instead of"
            + " starting a broker (with --admin-url).")
    String serviceUrl;

    @Option(names = "--admin-url", paramLabel = "URL", description = "Its admin (HTTP) URL.")
    String adminUrl;

    @Option(names = "--broker-pid", paramLabel = "PID", description = "With --service-url: the broker's process id on"
            + " this machine, to measure its CPU and memory.")
    Long brokerPid;

    @Option(names = "--namespace", paramLabel = "TENANT/NS", description = "Namespace of the benchmark topics"
            + " (default public/default).")
    String namespace;

    @Option(names = "--prime-consumers", paramLabel = "N", description = "Before each measured run, an unreported"
            + " 2 s run of the same mode with min(N, this) consumers on the same broker, so that JVM warm-up stays"
            + " out of the figures; 0 = off (default 1000; the quick preset: 0).")
    Integer primeConsumers;

    @Option(names = "--metrics-interval", paramLabel = "SECONDS", description = "Broadcast runs: scrape the broker's"
            + " /metrics this often for the broker-stage table and the dashboard PNG (metrics/, dashboard-*.png);"
            + " 0 = off (default 5).")
    Double metricsInterval;

    @Option(names = "--metrics-url", paramLabel = "URL", description = "The /metrics URL to scrape (default: the"
            + " admin URL's /metrics/; with --service-url, the broker that owns the topics).")
    String metricsUrl;

    @Option(names = "--progress", negatable = true, description = "Progress bars on standard error (default: on when"
            + " there is a terminal).")
    Boolean progress;

    private final String commandLine;

    public BenchCommand(String commandLine) {
        this.commandLine = commandLine;
    }

    /** The presets, for the end of {@code --help} (in picocli's format syntax: %n breaks, %% is a percent sign). */
    static String presetHelp() {
        return "%nPresets:%n" + java.util.Arrays.stream(Preset.values())
                .map(p -> String.format("  %-11s %s", p.cliName(), p.summary()).replace("%", "%%"))
                .collect(Collectors.joining("%n")) + "%n";
    }

    @Override
    public Integer call() throws IOException {
        BenchSettings s = settings();
        Files.createDirectories(s.out);
        if (System.getProperty("pulsar.broadcast.bench.log") == null) {
            System.setProperty("pulsar.broadcast.bench.log", s.out.resolve("bench-client.log").toString());
        }
        ReportWriter report = new ReportWriter(s, commandLine);
        List<ModeResult> results = new BenchRunner(s, report).run();
        List<String> problems = report.finish(results);
        problems.forEach(p -> System.err.println("warning: " + p));
        System.out.println();
        System.out.print(MarkdownReport.table(results));
        String capacity = SummaryTables.capacitySummary(results);
        if (!capacity.isEmpty()) {
            System.out.println();
            System.out.print(capacity);
        }
        String backlog = MarkdownReport.backlogTable(results);
        if (!backlog.isEmpty()) {
            System.out.println();
            System.out.print(backlog);
        }
        String move = SummaryTables.moveTable(results);
        if (!move.isEmpty()) {
            System.out.println();
            System.out.print(move);
        }
        String notes = MarkdownReport.notes(results);
        if (!notes.isEmpty()) {
            System.out.println();
            System.out.print(notes);
        }
        System.out.println();
        System.out.println("Report: " + s.out.resolve("results.md").toAbsolutePath());
        return 0;
    }

    /** The preset's settings with every given option applied, checked. */
    BenchSettings settings() {
        BenchSettings s;
        try {
            s = preset == null ? new BenchSettings() : Preset.parse(preset).settings();
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        set(consumers, v -> s.consumers = v);
        set(modes, v -> s.modes = v);
        set(messageSize, v -> s.messageSize = v);
        set(rate, v -> s.rate = v);
        set(warmup, v -> s.warmupSeconds = v);
        set(duration, v -> s.durationSeconds = v);
        set(batching, v -> s.batching = v);
        set(splitSubscriptions, v -> s.splitSubscriptions = v);
        set(consumersPerClient, v -> s.consumersPerClient = v);
        applyClientOptions(s);
        set(receiverQueue, v -> s.receiverQueue = v);
        set(ackGroupMs, v -> s.ackGroupMillis = v);
        set(connectConcurrency, v -> s.connectConcurrency = v);
        set(connectTimeout, v -> s.connectTimeoutSeconds = v);
        set(drainTimeout, v -> s.drainTimeoutSeconds = v);
        set(drainIdle, v -> s.drainIdleSeconds = v);
        set(pauseFraction, v -> s.pauseFraction = v);
        set(pauseSeconds, v -> s.pauseSeconds = v);
        set(pauseAfter, v -> s.pauseAfterSeconds = v);
        applyBrokerOptions(s);
        set(namespace, v -> s.namespace = v);
        set(primeConsumers, v -> s.primeConsumers = v);
        set(progress, v -> s.progress = v);
        set(metricsInterval, v -> s.metricsIntervalSeconds = v);
        set(metricsUrl, v -> s.metricsUrl = v);
        s.out = out != null ? out : Path.of("bench-results", s.preset + "-"
                + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
        String error = s.validate();
        if (error != null) {
            throw new CommandLine.ParameterException(spec.commandLine(), error);
        }
        return s;
    }

    private void applyClientOptions(BenchSettings s) {
        set(client, v -> s.client = v);
        set(connectRate, v -> s.connectRate = v);
        fleet.applyTo(s);
        set(repeat, v -> s.repeat = v);
        set(baselineSeconds, v -> s.baselineSeconds = v);
        set(lateGrace, v -> s.lateGraceSeconds = v);
        set(capacityRates, v -> s.capacityRates = v);
        set(stepSeconds, v -> s.capacityStepSeconds = v);
        set(capacityP99, v -> s.capacityP99Ms = v);
        set(stepDownSeconds, v -> s.capacityStepDownSeconds = v);
        set(moveTopicAfter, v -> s.moveTopicAfterSeconds = v);
        set(moveCommand, v -> s.moveCommand = v);
        set(stockMaxConsumers, v -> s.stockMaxConsumers = v);
    }

    private void applyBrokerOptions(BenchSettings s) {
        if (broker != null) {
            if (!broker.equals("plugin") && !broker.equals("stock")) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--broker is 'plugin' or 'stock'");
            }
            s.broker = broker.equals("stock") ? BenchSettings.BrokerKind.STOCK : BenchSettings.BrokerKind.PLUGIN;
        }
        set(brokerHeap, v -> s.brokerHeap = v);
        set(brokerDirectMemory, v -> s.brokerDirectMemory = v);
        set(brokerJavaOpts, v -> s.brokerJavaOpts = v);
        set(brokerConfig, v -> s.brokerConfig = v);
        set(freshBroker, v -> s.freshBroker = v);
        set(skipAfterFailure, v -> s.skipAfterFailure = v);
        set(serviceUrl, v -> s.serviceUrl = v);
        set(adminUrl, v -> s.adminUrl = v);
        set(brokerPid, v -> s.brokerPid = v);
        if (s.serviceUrl != null) {
            s.broker = BenchSettings.BrokerKind.EXTERNAL;
        }
    }

    /** Sets {@code value} when the option was given (not null). */
    static <T> void set(T value, Consumer<T> setter) {
        if (value != null) {
            setter.accept(value);
        }
    }

    /** Picocli converter for {@code --modes}. Threading: stateless; picocli calls it on the main thread. */
    static final class ModeConverter implements CommandLine.ITypeConverter<Mode> {
        @Override
        public Mode convert(String value) {
            return Mode.parse(value);
        }
    }
}
