package io.github.pulsarbroadcast.bench.fleet;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;

/**
 * What one fleet process does: which consumers it simulates (a contiguous range of the run's consumer indexes), how
 * they connect (consumers per connection, lookup, pace, source addresses) and how they receive (receiver queue,
 * acknowledgements). The benchmark JVM writes it as JSON; the fleet JVM reads it at start.
 *
 * <p>Threading: filled by one thread, then only read; the fleet JVM reads it before starting any other thread.
 */
public final class FleetSpec {

    /** {@code pulsar://host:port} of the cluster (or of the floor server). */
    public String serviceUrl;
    public String topic;
    /** The mode's command-line name ({@link io.github.pulsarbroadcast.bench.core.Mode}). */
    public String mode;
    /** Subscriptions the mode's consumers are spread over (1 for broadcast, K for split, N for one each). */
    public int subscriptions = 1;
    /** First consumer index of this process, and how many consumers it simulates. */
    public int firstConsumer;
    public int consumers;
    /** Consumers of the whole run (for the names and the pause group). */
    public int totalConsumers;
    public int consumersPerConnection = 1;
    /** The global index of this process's first connection (for the source addresses). */
    public int firstConnection;
    /**
     * Connections per loopback source address: connection {@code g} binds to {@code 127.0.0.(1 + g / this)}; 0 leaves
     * the choice to the kernel (one address).
     */
    public int connectionsPerSourceAddress;
    public int receiverQueue = 10;
    /** Cumulative instead of individual acknowledgements. */
    public boolean ackCumulative;
    /** Flush after every acknowledgement (the stock Java client) instead of once per read batch. */
    public boolean flushEveryAck;
    /** Partitioned-metadata and lookup requests before each subscribe, as the stock client sends them. */
    public boolean lookup = true;
    /** Subscribes started per second by this process; 0 = as fast as {@link #connectConcurrency} allows. */
    public double connectRate;
    /** Subscribes of this process in flight at once. */
    public int connectConcurrency = 1_000;
    /** The first measured (not warm-up) sequence number, and the messages of the run. */
    public int measuredFromSeq;
    public int totalMessages;
    /** Nanoseconds between sends (0 in a capacity run, whose rates vary): see {@code Deliveries}' window count. */
    public long periodNanos;
    /** Fraction of consumers in the backlog experiment's pause group (0 = none). */
    public double pauseFraction;
    /** Netty event-loop threads. */
    public int ioThreads = 1;
    /** How often the process reports its counters on standard output. */
    public int statusIntervalMs = 200;

    public static FleetSpec read(Path file) throws IOException {
        return new ObjectMapper().readValue(file.toFile(), FleetSpec.class);
    }

    public void write(Path file) throws IOException {
        new ObjectMapper().writerWithDefaultPrettyPrinter().writeValue(file.toFile(), this);
    }
}
