package io.github.pulsarbroadcast.bench;

import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The options of {@code pulsar-broadcast bench} that shape the consumer fleet ({@code --client fleet}): its connection
 * layout, its acknowledgements, its processes. A picocli mixin of {@link BenchCommand}; each option left out keeps the
 * preset's value.
 *
 * <p>Threading: picocli fills the fields on the main thread, which then calls {@link #applyTo}.
 */
final class FleetOptions {

    @Spec(Spec.Target.MIXEE)
    CommandSpec spec;

    @Option(names = "--consumers-per-connection", paramLabel = "K", description = "Fleet: consumers sharing one"
            + " connection; 1 is one device per connection, more is a gateway or proxy; 0 = 1 where the broker's"
            + " open-file limit allows, else the smallest of 10, 100, ... that fits (default 1).")
    Integer consumersPerConnection;

    @Option(names = "--lookup", negatable = true, description = "Fleet: partitioned-metadata and lookup requests"
            + " before each subscribe, as the stock client sends them (default on; --no-lookup skips them).")
    Boolean lookup;

    @Option(names = "--ack", paramLabel = "individual|cumulative", description = "Fleet: acknowledgement type"
            + " (default individual; readers always cumulative, as the stock Reader).")
    String ack;

    @Option(names = "--ack-flush", paramLabel = "read|message", description = "Fleet: flush acknowledgements once"
            + " per read batch (read, as Netty does) or after each one (message, as the stock Java client)"
            + " (default read).")
    String ackFlush;

    @Option(names = "--fleet-processes", paramLabel = "P", description = "Fleet: processes to spread the"
            + " connections over; 0 = as many as the open-file limit (read from the OS) needs (default 0).")
    Integer fleetProcesses;

    @Option(names = "--fleet-threads", paramLabel = "N", description = "Fleet: Netty event-loop threads per process"
            + " (default 1).")
    Integer fleetThreads;

    @Option(names = "--fleet-java-opts", paramLabel = "OPTS", description = "JVM options of each fleet process and of"
            + " the floor server (default -Xms256m -Xmx2g -XX:+UseSerialGC -XX:MaxDirectMemorySize=4g; with 1g the"
            + " fleet ran out of direct memory at 100,000 consumers past the broker's sustainable rate).")
    String fleetJavaOpts;

    @Option(names = "--connections-per-address", paramLabel = "N", description = "Fleet: connections per loopback"
            + " source address (127.0.0.1, 127.0.0.2, ...); 0 = one address's ephemeral ports less 2,000 (default"
            + " 0).")
    Integer connectionsPerAddress;

    /** Applies every option given to {@code s}; a bad value is a parameter error naming the option. */
    void applyTo(BenchSettings s) {
        BenchCommand.set(consumersPerConnection, v -> s.consumersPerConnection = v);
        BenchCommand.set(lookup, v -> s.lookup = v);
        if (ack != null) {
            if (!ack.equals("individual") && !ack.equals("cumulative")) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--ack is 'individual' or 'cumulative'");
            }
            s.ackCumulative = ack.equals("cumulative");
        }
        if (ackFlush != null) {
            if (!ackFlush.equals("read") && !ackFlush.equals("message")) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--ack-flush is 'read' or 'message'");
            }
            s.flushEveryAck = ackFlush.equals("message");
        }
        BenchCommand.set(fleetProcesses, v -> s.fleetProcesses = v);
        BenchCommand.set(fleetThreads, v -> s.fleetThreads = v);
        BenchCommand.set(fleetJavaOpts, v -> s.fleetJavaOpts = v);
        BenchCommand.set(connectionsPerAddress, v -> s.connectionsPerAddress = v);
    }
}
