package io.github.pulsarbroadcast.bench;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.github.pulsarbroadcast.bench.core.Mode;
import io.github.pulsarbroadcast.bench.core.Percentiles;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What one mode did at one N: the record in results.json and the row of the Markdown table. {@link #status} is
 * {@code ok} when the run got to the end (messages may still be lost, see {@link Delivery}), {@code failed} with a
 * {@link #reason} when it could not (for example it timed out connecting or ran out of memory), and {@code skipped}
 * with a reason when it was not attempted.
 *
 * <p>Threading: filled by the thread that runs the mode, then handed to the report writers on the same thread.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public final class ModeResult {

    public static final String OK = "ok";
    public static final String FAILED = "failed";
    public static final String SKIPPED = "skipped";

    public Mode mode;
    public int consumers;
    /** Which client simulated the consumers: {@code java} (the stock client) or {@code fleet}. */
    public String clientKind;
    /** 0-based repetition of this (mode, N) pair ({@code --repeat}). */
    public int repeat;
    /**
     * Measured runs the broker JVM (or floor server) had served before this one in this benchmark: 0 for a fresh
     * one; more with {@code --no-fresh-broker} or an external broker, whose JIT and heap are then warm.
     */
    public int brokerRunsBefore;
    /** Subscriptions the consumers are spread over (1 for broadcast, N for one-each, K for split). */
    public int subscriptions;
    public String topic;
    public String status = OK;
    public String reason;
    /** Notes that do not fail the run (for example that the mode cannot pause). */
    public List<String> notes = new ArrayList<>();
    public int clients;
    /** Wall-clock seconds of the whole run, connect to close. */
    public double wallSeconds;
    /** Milliseconds spent in each phase, in order (creating clients, connecting, publishing, draining, ...). */
    public Map<String, Long> phasesMs = new LinkedHashMap<>();

    public Connect connect;
    public Latency latency;
    public Delivery delivery;
    public BrokerUsage broker;
    /** The client side: the benchmark JVM and, with the fleet, the fleet processes. */
    public ClientUsage client;
    /** The whole machine during the run (Linux only; absent elsewhere). */
    public MachineUsage machine;
    /** The measured window: from the first measured send to the last delivery. */
    public Window window;
    public Backlog backlog;
    /** The topic move, when one was planned. */
    public Move move;
    /**
     * Broadcast runs: where the time went inside the broker over the measured window, from the broker's own stage
     * histograms ({@code --metrics-interval}); says when the broker exported none.
     */
    public io.github.pulsarbroadcast.bench.metrics.StageBreakdown brokerStages;
    /** A capacity run's steps, in order, and the highest one that passed (null when none did). */
    public List<CapacityStep> capacity;
    public CapacityStep sustained;

    /** For Jackson. */
    public ModeResult() {
    }

    public ModeResult(Mode mode, int consumers, int subscriptions) {
        this.mode = mode;
        this.consumers = consumers;
        this.subscriptions = subscriptions;
    }

    public static ModeResult skipped(Mode mode, int consumers, int subscriptions, String reason) {
        ModeResult r = new ModeResult(mode, consumers, subscriptions);
        r.status = SKIPPED;
        r.reason = reason;
        return r;
    }

    public void fail(String why) {
        if (!FAILED.equals(status)) {
            status = FAILED;
            reason = why;
        }
    }

    public boolean ok() {
        return OK.equals(status);
    }

    /** Connecting the N consumers. Times are milliseconds from the first subscribe request. Threading: as above. */
    public static final class Connect {
        public int requested;
        public int connected;
        public int failedToConnect;
        /** First subscribe request to last completion; null when not every consumer connected. */
        public Long allConnectedMs;
        /** When each consumer finished connecting, from the first request (NTT's figure 5). */
        public Percentiles connectedAtMs;
        /** Each consumer's own subscribe request to completion. */
        public Percentiles subscribeMs;
        /** {@link #connectedAtMs} in bins, for the histogram chart. */
        public List<Bin> histogram = new ArrayList<>();
        public String firstError;
    }

    /** One bar of a histogram: {@code count} values in {@code [fromMs, toMs)}. Threading: as above. */
    public static final class Bin {
        public long fromMs;
        public long toMs;
        public long count;

        public Bin() {
        }

        public Bin(long fromMs, long toMs, long count) {
            this.fromMs = fromMs;
            this.toMs = toMs;
            this.count = count;
        }
    }

    /** Latency of the measured messages (warm-up excluded), over all consumers, in ms. Threading: as above. */
    public static final class Latency {
        /**
         * Receive time minus the message's intended send time (start + k x period on the monotonic clock that every
         * process of this machine shares); pairs still missing at the end are in it as their age (see
         * {@link #missingPairs}).
         */
        public Percentiles endToEnd;
        /** Receive time minus the publish time the producer stamped when the send actually ran (epoch ms). */
        public Percentiles fromPublish;
        /** Measured pairs that never arrived, recorded in {@link #endToEnd} as their age at the end (a lower bound). */
        public long missingPairs;
        /** The smallest such age: percentiles at or above it are lower bounds ("> x" in the table); -1 for none. */
        public long missingMinAgeMs = -1;
        /** The distribution over measured messages of the time until the last consumer had the message. */
        public Percentiles worstFanOut;
        /** Per measured message: intended send time from the first measured one (s), worst and mean latency (ms). */
        public List<double[]> overRun = new ArrayList<>();
        /** Broker publish time minus publish time; empty when the broker sent no broker timestamps. */
        public Percentiles publishToBroker;
        /** Receive time minus broker publish time. */
        public Percentiles brokerToConsumer;
    }

    /**
     * Message deliveries summed over consumers: each consumer expects every message that the producer got
     * acknowledged ({@code expected = published x consumers}); {@code delivered + lost == expected}. Threading:
     * as above.
     */
    public static final class Delivery {
        public int totalMessages;
        public int warmupMessages;
        public int published;
        public int publishFailures;
        public long expected;
        public long delivered;
        public long lost;
        public long duplicated;
        public long outOfOrder;
        public int consumersComplete;
        public int consumersWithLoss;
        public int consumersWithDuplicates;
        public int consumersOutOfOrder;
        /** The fewest messages any one consumer got. */
        public long minDeliveredPerConsumer;
        /** Pairs not delivered when the drain ended; of these {@link #arrivedLate} came during the grace after it. */
        public long missingAtDrainEnd;
        public long arrivedLate;
        /** Sends refused because 1,000 were pending (the producer never blocks). */
        public int rejectedSends;
        /** How late each send ran after its intended time (ms). */
        public Percentiles sendLag;
        /** Measured messages sent per second, first to last measured send. */
        public double achievedRate;
        /**
         * False when the producer could not keep its schedule: sends refused, or the send lag's P99 above a period
         * (or 50 ms, whichever is longer), or not every message sent.
         */
        public boolean scheduleKept = true;
        /** From the last publish to the end of the drain. */
        public long drainMs;
        /** True when the drain stopped on its time-out or idle limit before everything arrived. */
        public boolean drainCutShort;
    }

    /**
     * The broker process during this run; absent when its process is unknown (external cluster, no pid). Threading:
     * as above.
     */
    public static final class BrokerUsage {
        public long pid;
        /** CPU over the measured window, per measured delivery (µs). */
        public double cpuUsPerDelivery;
        /** CPU of the connect phase per consumer that connected (µs). */
        public double cpuUsPerSubscribe;
        /** CPU seconds over the measured window. */
        public double cpuSecondsWindow;
        /**
         * Minor page faults of the broker process over the measured window: memory it touched for the first time,
         * each page zeroed by the kernel on its CPU (a fresh heap as it grows); -1 when not measured (not Linux).
         */
        public long minorPageFaultsWindow = -1;
        /** CPU seconds per second with no consumer connected, and with every consumer connected but no messages. */
        public double idleCpuPerSecond = -1;
        public double connectedCpuPerSecond = -1;
        /** True when the broker JVM was started for this run alone (and its unreported warm-up run). */
        public boolean freshBroker;
        public double cpuSecondsConnect;
        public double cpuSecondsRun;
        public double cpuSeconds;
        /** Largest resident set seen while the run lasted (sampled every 200 ms). */
        public long peakRssBytes;
        /** The process's lifetime peak (VmHWM) at the end of the run. */
        public long lifetimePeakRssBytes;
        /** Heap in use right after a full collection at the end of the run, and direct memory in use; -1: unknown. */
        public long heapUsedAfterGcBytes = -1;
        public long directMemoryUsedBytes = -1;
        /**
         * CPU seconds by group of the broker JVM's threads ({@code ThreadCpu}: event loops, the plugin's threads,
         * JIT, GC, stock stats, storage and metadata, ...; "threads that ended" is the process's CPU that no group
         * holds) over the measured window and over the connect phase; null when not measured (not Linux).
         */
        public java.util.Map<String, Double> threadCpuSecondsWindow;
        public java.util.Map<String, Double> threadCpuSecondsConnect;
    }

    /**
     * The whole machine during the run, from {@code /proc/stat}: CPU taken by processes other than the broker,
     * the consumers and the benchmark JVM, and CPU stolen by the host of a virtual machine. Either makes the run's
     * figures the machine's rather than the broker's. Threading: as above.
     */
    public static final class MachineUsage {
        /** Busy CPU seconds of every process (and the kernel) over the measured window. */
        public double cpuSecondsWindow;
        /**
         * What of it was neither the broker, the consumers' processes nor the benchmark JVM: other processes and kernel
         * work charged to no process (-1: unknown, the broker's process not being measured).
         */
        public double otherCpuSecondsWindow = -1;
        /** CPU seconds the host stole over the measured window, and from the first subscribe to the end. */
        public double stolenCpuSecondsWindow;
        public double stolenCpuSecondsRun;
        /** The most CPU seconds per second stolen over any second of the run (first subscribe to the end). */
        public double peakStolenCpuPerSecond;
    }

    /** The benchmark JVM itself (all clients and the producer). Threading: as above. */
    public static final class ClientUsage {
        /** Processes besides the benchmark JVM (fleet processes). */
        public int processes;
        /** The fleet's connections, reconnects and unreadable entries. */
        public int connections;
        public long reconnects;
        public long entryErrors;
        /** One line on the fleet's layout. */
        public String layout;
        /**
         * CPU over the measured window, per measured delivery (µs), of the consumers' processes: the fleet
         * processes, or with the stock Java client the benchmark JVM (which also holds the producer).
         */
        public double cpuUsPerDelivery;
        /** With the fleet: the benchmark JVM (producer, polling, sampling) from the first subscribe to the end. */
        public double benchJvmCpuSeconds;
        public double benchJvmCpuSecondsWindow;
        public double cpuSecondsWindow;
        public double idleCpuPerSecond = -1;
        public double connectedCpuPerSecond = -1;
        /** CPU seconds while connecting, and from then to the end of the drain (as for the broker). */
        public double cpuSecondsConnect;
        public double cpuSecondsRun;
        public double cpuSeconds;
        public long heapUsedBytes;
        public long heapMaxBytes;
        /** With the Java client: this JVM's heap after a full collection and its direct memory; -1: unknown. */
        public long heapUsedAfterGcBytes = -1;
        public long directMemoryUsedBytes = -1;
    }

    /** One rate of a capacity run, on the same consumers as the steps before. Threading: as above. */
    public static final class CapacityStep {
        public double rate;
        public int messages;
        public long expected;
        public long delivered;
        /** The step's measured deliveries over its window (first send to last delivery). */
        public double deliveriesPerSecond;
        public Percentiles endToEnd;
        public Percentiles worstFanOut;
        public Percentiles sendLag;
        public boolean scheduleKept;
        /** The fleet's reconnects plus unreadable entries from the run's start to this step's end. */
        public long fleetErrors;
        /** Every delivery in the step's window (first send to last delivery), any step's message: what its CPU did. */
        public long deliveredInWindow;
        /** Broker CPU over the step's window divided by {@link #deliveredInWindow}. */
        public double brokerCpuUsPerDelivery;
        /** Broker CPU seconds per second over the step's window (1.0 = one core). */
        public double brokerCpuPerSecond;
        /** Broker CPU seconds over the step's window. */
        public double brokerCpuSeconds;
        /**
         * Messages the broker itself counted as delivered ({@code pulsar_broadcast_messages_delivered_total}, every
         * subscription of the topic) over the step's window, interpolated between the scrapes around its edges; -1
         * without the broker's metrics. Unlike {@link #deliveredInWindow} it counts what was written and is still in
         * flight (up to the receiver queue per consumer) when the window ends.
         */
        public long brokerDeliveredInWindow = -1;
        /** Broker CPU over the step's window divided by {@link #brokerDeliveredInWindow}; 0 without it. */
        public double brokerCpuUsPerBrokerDelivery;
        /** The step's window as {@link System#nanoTime} instants (not reported). */
        @com.fasterxml.jackson.annotation.JsonIgnore
        public long windowFromNanos;
        @com.fasterxml.jackson.annotation.JsonIgnore
        public long windowToNanos;
        public double clientsCpuUsPerDelivery;
        public boolean passed;
        /** Why the run stopped at this step, when it did. */
        public String stoppedBecause;
        /** The step back down after the step that failed ({@link StepDown}); never counts as sustained. */
        public boolean stepDown;
        /** Step back down: the level (ms) its worst fan-out slices had to return to. */
        public long recoveryLevelMs;
        /** Step back down: seconds from its start until its slices stayed at or below the level; null: never. */
        public Long recoveredAfterSeconds;
        /** Step back down: {@code [slice start (s), P99 of the slice's worst fan-out (ms)]}. */
        public List<long[]> slices;
    }

    /** A topic move during the run ({@code --move-topic-after}); times in s from the unload request. */
    public static final class Move {
        /** Into the measured period. */
        public int afterSeconds;
        /** How the topic moved: "unload" (the admin API) or the {@code --move-command} given. */
        public String by;
        /** Until the admin API answered the unload, or the move command exited; null: neither. */
        public Double unloadSeconds;
        /** Until every consumer was subscribed again (the fleet reports every 200 ms); null: not while publishing. */
        public Double allBackSeconds;
        public String unloadError;
        /** Duplicates per consumer over the whole run (a move is where they come from). */
        public Percentiles duplicatesPerConsumer;
        public long duplicates;
        public int consumersWithDuplicates;
        /** Why there are no figures, when there are none. */
        public String note;
    }

    /** The measured window. Threading: as above. */
    public static final class Window {
        public double seconds;
        /** Measured (consumer, message) pairs delivered. */
        public long deliveries;
    }

    /** The backlog experiment: some pause, then catch up. Latencies and times in ms. Threading: as above. */
    public static final class Backlog {
        public int pausedConsumers;
        public int pauseSeconds;
        public int pauseAfterSeconds;
        /** Resume until each paused consumer had every message published before the resume. */
        public Percentiles catchUpMs;
        public int notCaughtUp;
        /** The other consumers' end-to-end latency before the pause, during it, and during the catch-up. */
        public Percentiles othersBefore;
        public Percentiles othersDuringPause;
        public Percentiles othersDuringCatchUp;
    }
}
