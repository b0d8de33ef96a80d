package io.github.pulsarbroadcast.bench;

import com.fasterxml.jackson.annotation.JsonIgnore;
import io.github.pulsarbroadcast.bench.core.Mode;
import io.github.pulsarbroadcast.bench.fleet.FleetEngine;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Everything one benchmark invocation does: the workload, the modes, the broker and the output. Starts with the
 * built-in defaults, then a {@link Preset} changes some values, then each command-line flag overrides one. The
 * fields are public so that results.json records them as they were.
 *
 * <p>Threading: filled by {@link BenchCommand} on the main thread before the run starts, then only read (by the main
 * thread and the workers it starts afterwards, which the thread start orders after the writes).
 */
public final class BenchSettings implements Cloneable {

    /** Which broker the tool starts (or {@link #EXTERNAL} for {@code --service-url}). Threading: immutable. */
    public enum BrokerKind {
        /** The standalone broker with the broadcast plugin. */
        PLUGIN,
        /** The standalone broker without the plugin ({@code --no-plugin}): broadcast modes are skipped. */
        STOCK,
        /** An existing cluster named by {@code --service-url} and {@code --admin-url}. */
        EXTERNAL
    }

    public String preset = "none";
    /** One run of every mode per value. */
    public List<Integer> consumers = new ArrayList<>(List.of(1_000));
    public List<Mode> modes = new ArrayList<>(Mode.BROKER_MODES);
    public int messageSize = 10 * 1024;
    /** Messages per second. */
    public double rate = 1;
    public int warmupSeconds = 10;
    public int durationSeconds = 60;
    public boolean batching;
    /** K of the split mode. */
    public int splitSubscriptions = 4;
    public int consumersPerClient = 2_000;

    /** Who simulates the consumers: {@code java} (stock Java client, in this JVM) or {@code fleet}. */
    public String client = "java";
    /**
     * Fleet: simulated consumers sharing one connection (1: each its own, as separate devices; 0: one each where the
     * broker's open-file limit allows, else the smallest of 10, 100, 1,000, ... that fits).
     */
    public int consumersPerConnection = 1;
    /** Subscribes started per second over all consumers; 0 = as fast as {@link #connectConcurrency} allows. */
    public double connectRate;
    /** Fleet: partitioned-metadata and lookup requests before each subscribe, as the stock client sends them. */
    public boolean lookup = true;
    /** Fleet: cumulative instead of individual acknowledgements. */
    public boolean ackCumulative;
    /** Fleet: flush after every acknowledgement (as the stock client) instead of once per read batch. */
    public boolean flushEveryAck;
    /** Fleet: processes; 0 = as many as the open-file limit needs. */
    public int fleetProcesses;
    /** Fleet: Netty event-loop threads per process. */
    public int fleetThreads = 1;
    public String fleetJavaOpts = "-Xms256m -Xmx2g -XX:+UseSerialGC -XX:MaxDirectMemorySize=4g";
    /** Fleet: connections per loopback source address; 0 = as many as one address's ephemeral ports allow. */
    public int connectionsPerAddress;
    /** Runs of every (N, mode) pair; modes rotate their order from one repetition to the next. */
    public int repeat = 1;
    /** Seconds of CPU baseline measured before connecting and again once everyone is connected; 0 = none. */
    public int baselineSeconds = 3;
    /** After a drain that ended with deliveries missing, how long late arrivals are still counted apart. */
    public int lateGraceSeconds = 5;
    /**
     * Capacity runs: publish rates (msg/s) stepped up one after the other on the same consumers, until a step's P99
     * passes {@link #capacityP99Ms} or its deliveries fall behind; null for a normal run.
     */
    public List<Double> capacityRates;
    public int capacityStepSeconds = 30;
    public long capacityP99Ms = 1_000;
    /** After a step's last send, how long its deliveries may still arrive before the step is judged. */
    public int capacitySettleSeconds = 5;
    /**
     * After the first step that fails, one step back down to the highest rate that passed, this long, to see how
     * long the broker takes to return to its earlier latency ({@link StepDown}); 0 = none.
     */
    public int capacityStepDownSeconds;
    /** Modes without the plugin run only up to this many consumers; 0 = no limit. */
    public int stockMaxConsumers;
    public int receiverQueue = 10;
    /** 0 sends every acknowledgement at once (the client then keeps no per-consumer flush timer). */
    public int ackGroupMillis;
    /** Subscribe requests in flight at once, over all clients. */
    public int connectConcurrency = 1_000;
    public int connectTimeoutSeconds = 600;
    public int drainTimeoutSeconds = 60;
    public int drainIdleSeconds = 10;

    /** Fraction of consumers paused for the backlog experiment; 0 disables it. */
    public double pauseFraction;
    public int pauseSeconds = 30;
    /** When the pause starts, in seconds after the measured period started. */
    public int pauseAfterSeconds = 30;
    /**
     * A topic move ({@link TopicMove}): this many seconds into the measured period the topic is unloaded, and every
     * consumer reconnects and resumes; 0 = none. Fleet client only.
     */
    public int moveTopicAfterSeconds;
    /**
     * The shell command that moves the topic instead of the admin API's unload ({@code {topic}} is replaced by the
     * topic's full name), for example a kill of the owning broker; null: the unload.
     */
    public String moveCommand;

    public BrokerKind broker = BrokerKind.PLUGIN;
    public String serviceUrl;
    public String adminUrl;
    /** The external broker's process id, for CPU and memory figures; null when unknown. */
    public Long brokerPid;
    public String brokerHeap = "6g";
    public String brokerDirectMemory = "4g";
    /** Extra JVM options for the broker JVM, space-separated. */
    public String brokerJavaOpts = "";
    /** Extra broker.conf keys appended to the generated configuration; null for none. */
    public Path brokerConfig;
    /** A broker of its own for every run (clean CPU and memory figures) instead of one for the whole invocation. */
    public boolean freshBroker = true;
    /** Once a mode fails at some N, skip it at larger N. */
    public boolean skipAfterFailure = true;
    public String namespace = "public/default";
    /**
     * Before each measured run, an unreported miniature of it (this many consumers at most, 2 s of publishing) on
     * the same broker, so that neither JVM's warm-up lands in the figures; 0 turns it off.
     */
    public int primeConsumers = 1_000;
    /**
     * Broadcast runs: scrape the broker's {@code /metrics} this often (seconds) for the stage table and the dashboard
     * PNG; 0 turns it off. Each scrape costs the broker CPU, which is in its figures.
     */
    public double metricsIntervalSeconds = 5;
    /** The metrics URL to scrape; null: the admin URL's {@code /metrics/}. */
    public String metricsUrl;

    /** Progress bars: null means "when there is a terminal". */
    @JsonIgnore
    public Boolean progress;
    @JsonIgnore
    public Path out;

    /** The settings of the unreported warm-up run before a measured run of {@code consumers}. */
    BenchSettings forPriming(int consumers) {
        try {
            BenchSettings p = (BenchSettings) super.clone();
            p.consumers = List.of(consumers);
            p.warmupSeconds = 0;
            p.durationSeconds = 2;
            p.rate = Math.max(rate, 5);
            p.pauseFraction = 0;
            p.moveTopicAfterSeconds = 0;
            p.moveCommand = null;
            p.baselineSeconds = 0;
            p.lateGraceSeconds = 0;
            p.repeat = 1;
            p.capacityRates = null;
            p.metricsIntervalSeconds = 0;
            p.drainTimeoutSeconds = Math.min(drainTimeoutSeconds, 30);
            p.drainIdleSeconds = Math.min(drainIdleSeconds, 5);
            p.progress = false;
            return p;
        } catch (CloneNotSupportedException e) {
            throw new AssertionError(e);
        }
    }

    /** True for a capacity run ({@link #capacityRates}). */
    /** Nanoseconds between sends of a run at {@link #rate}; 0 for a capacity run (each step has its own rate). */
    public long periodNanos() {
        return capacity() || rate <= 0 ? 0 : Math.max(1, Math.round(1e9 / rate));
    }

    public boolean capacity() {
        return capacityRates != null && !capacityRates.isEmpty();
    }

    /** Messages in capacity step {@code k} (0-based). */
    public int capacityStepMessages(int k) {
        return (int) Math.max(1, Math.round(capacityRates.get(k) * capacityStepSeconds));
    }

    /** Number of messages published per run: warm-up plus measured (every step's, in a capacity run). */
    public int totalMessages() {
        if (capacity()) {
            int total = 0;
            for (int k = 0; k < capacityRates.size(); k++) {
                total += capacityStepMessages(k);
            }
            // Room for the step back down, at most at the highest rate.
            double highest = capacityRates.stream().mapToDouble(Double::doubleValue).max().orElse(0);
            return total + (int) Math.round(highest * capacityStepDownSeconds);
        }
        return warmupMessages() + (int) Math.round(durationSeconds * rate);
    }

    /** Messages published during the warm-up; their latency is not recorded (none in a capacity run). */
    public int warmupMessages() {
        return capacity() ? 0 : (int) Math.round(warmupSeconds * rate);
    }

    /** True when the broker is a JVM that this tool starts. */
    public boolean forkedBroker() {
        return broker != BrokerKind.EXTERNAL;
    }

    /** True when the consumer fleet simulates the consumers. */
    public boolean fleet() {
        return "fleet".equals(client);
    }

    /** True when the service URL (or the broker this tool starts) is on a loopback address. */
    boolean loopbackTarget() {
        if (serviceUrl == null) {
            return true;
        }
        try {
            for (InetSocketAddress host : FleetEngine.serviceAddresses(serviceUrl)) {
                if (host.getAddress() == null || !host.getAddress().isLoopbackAddress()) {
                    return false;
                }
            }
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    /** Checks that the values make sense together; returns an error message or null. */
    public String validate() {
        String basic = validateBasics();
        return basic != null ? basic : validateClients();
    }

    private String validateClients() {
        if (!client.equals("java") && !client.equals("fleet")) {
            return "--client is 'java' or 'fleet'";
        }
        if (consumersPerConnection < 0 || fleetProcesses < 0 || fleetThreads < 1 || connectRate < 0
                || connectionsPerAddress < 0 || repeat < 1 || baselineSeconds < 0 || lateGraceSeconds < 0) {
            return "--fleet-threads and --repeat must be positive; --consumers-per-connection, --fleet-processes,"
                    + " --connect-rate, --connections-per-address, --baseline-seconds and --late-grace not negative";
        }
        if (capacity() && modes.contains(Mode.FLOOR)) {
            return "the floor server publishes at one rate: no floor mode in a capacity run";
        }
        if (capacity() && (capacityRates.stream().anyMatch(r -> r <= 0) || capacityStepSeconds < 1
                || capacityP99Ms < 1 || capacitySettleSeconds < 0 || capacityStepDownSeconds < 0
                || pauseFraction > 0)) {
            return "--capacity-rates must be positive, --step-seconds and --capacity-p99 too; no pause in a capacity"
                    + " run";
        }
        if (!lookup && serviceUrl != null && FleetEngine.serviceAddresses(serviceUrl).length > 1) {
            return "--no-lookup subscribes on the service URL's broker itself: give it one host, not " + serviceUrl;
        }
        if (moveCommand != null && (moveTopicAfterSeconds <= 0 || moveCommand.isBlank())) {
            return "--move-command needs --move-topic-after (when to run it) and a command";
        }
        if (moveTopicAfterSeconds < 0 || moveTopicAfterSeconds > 0 && (!fleet() || capacity())) {
            return "--move-topic-after needs the fleet client (it counts the consumers that are subscribed again)"
                    + " and a run that is not a capacity run; 0 = no move";
        }
        if (!fleet()) {
            return null;
        }
        long brokerLimit = broker == BrokerKind.EXTERNAL
                ? (brokerPid == null ? -1 : OsLimits.openFiles(Long.toString(brokerPid))) : OsLimits.openFiles();
        for (int n : consumers) {
            FleetLayout layout = FleetLayout.of(this, n);
            String problem = layout.problem(brokerLimit);
            if (problem != null) {
                return problem;
            }
            if (layout.sourceAddresses() > 1 && !loopbackTarget()) {
                return String.format("%,d connections need several loopback source addresses, but %s is not on"
                        + " loopback; use more --consumers-per-connection", layout.connections, serviceUrl);
            }
        }
        return null;
    }

    private String validateBasics() {
        if (consumers.isEmpty() || consumers.stream().anyMatch(n -> n < 1)) {
            return "--consumers needs positive numbers";
        }
        if (modes.isEmpty()) {
            return "--modes needs at least one mode (" + Mode.names() + ")";
        }
        if (new java.util.HashSet<>(modes).size() < modes.size()
                || new java.util.HashSet<>(consumers).size() < consumers.size()) {
            return "--modes and --consumers take each value once";
        }
        if (metricsIntervalSeconds < 0) {
            return "--metrics-interval must not be negative";
        }
        if (messageSize < 1 || rate <= 0 || durationSeconds < 1 || warmupSeconds < 0) {
            return "--message-size, --rate and --duration must be positive, --warmup not negative";
        }
        if (totalMessages() < 1 || (long) totalMessages() > 100_000_000L) {
            return "the run would publish " + totalMessages() + " messages; keep it between 1 and 100,000,000";
        }
        if (splitSubscriptions < 1 || consumersPerClient < 1 || receiverQueue < 1 || connectConcurrency < 1) {
            return "--split-subscriptions, --consumers-per-client, --receiver-queue and --connect-concurrency"
                    + " must be positive";
        }
        if (pauseFraction < 0 || pauseFraction > 1) {
            return "--pause-fraction must be between 0 and 1";
        }
        if ((serviceUrl == null) != (adminUrl == null)) {
            return "--service-url and --admin-url go together";
        }
        return null;
    }
}
