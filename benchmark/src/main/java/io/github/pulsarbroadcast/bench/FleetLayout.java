package io.github.pulsarbroadcast.bench;

import io.github.pulsarbroadcast.bench.fleet.SourceAddresses;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * How the fleet spreads N consumers: {@code K} consumers per connection, the connections over fleet processes (each
 * within its open-file limit, read from the OS), and over loopback source addresses when one address's ephemeral
 * ports would not do. {@link #problem} explains, naming the limit, why a layout cannot run, so that it is refused
 * before anything starts.
 *
 * <p>Threading: immutable; any thread.
 */
final class FleetLayout {

    /** The consumers and connections of one fleet process. Threading: immutable. */
    static final class Part {
        final int firstConsumer;
        final int consumers;
        final int firstConnection;

        Part(int firstConsumer, int consumers, int firstConnection) {
            this.firstConsumer = firstConsumer;
            this.consumers = consumers;
            this.firstConnection = firstConnection;
        }
    }

    final int consumers;
    final int perConnection;
    final int connections;
    final int processes;
    /** Connections per source address; 0 lets the kernel choose (all from 127.0.0.1). */
    final int perAddress;
    final long fileLimit;
    final List<Part> parts;

    private FleetLayout(int consumers, int perConnection, int processes, int perAddress, long fileLimit) {
        this.consumers = consumers;
        this.perConnection = perConnection;
        this.connections = (consumers + perConnection - 1) / perConnection;
        this.processes = Math.max(1, Math.min(processes, connections));
        this.perAddress = perAddress;
        this.fileLimit = fileLimit;
        this.parts = new ArrayList<>();
        for (int p = 0; p < this.processes; p++) {
            int fromConnection = (int) ((long) connections * p / this.processes);
            int toConnection = (int) ((long) connections * (p + 1) / this.processes);
            int from = fromConnection * perConnection;
            int to = Math.min(consumers, toConnection * perConnection);
            parts.add(new Part(from, to - from, fromConnection));
        }
    }

    /**
     * The layout of {@code n} consumers under the settings: {@code --fleet-processes} (0: as many as the open-file
     * limit needs) and {@code --connections-per-address} (0: as many as one address's ephemeral ports allow).
     */
    static FleetLayout of(BenchSettings s, int n) {
        long limit = OsLimits.openFiles();
        long perProcess = OsLimits.connectionsWithin(limit);
        int k = s.consumersPerConnection > 0 ? s.consumersPerConnection : autoPerConnection(n, s.broker
                == BenchSettings.BrokerKind.EXTERNAL ? -1 : perProcess);
        int connections = (n + k - 1) / k;
        int processes = s.fleetProcesses > 0 ? s.fleetProcesses
                : (int) Math.max(1, (connections + perProcess - 1) / Math.max(1, perProcess));
        int perAddress = s.connectionsPerAddress > 0 ? s.connectionsPerAddress
                : connections > SourceAddresses.defaultPerAddress() ? SourceAddresses.defaultPerAddress() : 0;
        return new FleetLayout(n, k, processes, perAddress, limit);
    }

    /**
     * {@code --consumers-per-connection 0}: 1 when {@code n} connections fit {@code brokerMax}, else the smallest of
     * 10, 100, 1,000, ... that makes them fit.
     */
    static int autoPerConnection(int n, long brokerMax) {
        int k = 1;
        while (brokerMax > 0 && (n + k - 1) / k > brokerMax && k < n) {
            k *= 10;
        }
        return k;
    }

    /** Connections of the busiest fleet process. */
    int maxConnectionsPerProcess() {
        return (connections + processes - 1) / processes;
    }

    /** Source addresses the layout uses. */
    int sourceAddresses() {
        return SourceAddresses.addressesFor(connections, perAddress);
    }

    /**
     * Why this layout cannot run against a broker process whose open-file limit is {@code brokerFileLimit} (-1:
     * unknown, not checked; the floor server counts as one), or null when it can.
     */
    String problem(long brokerFileLimit) {
        long perProcess = OsLimits.connectionsWithin(fileLimit);
        if (maxConnectionsPerProcess() > perProcess) {
            return String.format(Locale.ROOT, "%,d consumers at %,d per connection are %,d connections: %,d per fleet"
                    + " process in %d process(es), but a process here may hold at most %,d (open-file limit %,d"
                    + " from /proc/self/limits, less %,d for the JVM's own files); use --fleet-processes %d or more,"
                    + " or more --consumers-per-connection", consumers, perConnection, connections,
                    maxConnectionsPerProcess(), processes, perProcess, fileLimit, OsLimits.FILE_RESERVE,
                    (connections + perProcess - 1) / Math.max(1, perProcess));
        }
        long brokerMax = OsLimits.connectionsWithin(brokerFileLimit);
        if (connections > brokerMax) {
            return String.format(Locale.ROOT, "%,d consumers at %,d per connection are %,d connections, but the"
                    + " broker process may hold at most %,d (open-file limit %,d, less %,d for its own files:"
                    + " storage, ZooKeeper and bookie in the standalone); use --consumers-per-connection %d or more",
                    consumers, perConnection, connections, brokerMax, brokerFileLimit, OsLimits.FILE_RESERVE,
                    (consumers + brokerMax - 1) / Math.max(1, brokerMax));
        }
        if (sourceAddresses() > SourceAddresses.maxAddresses()) {
            return String.format(Locale.ROOT, "%,d connections at %,d per source address need %,d loopback"
                    + " addresses; at most %d are used", connections, perAddress, sourceAddresses(),
                    SourceAddresses.maxAddresses());
        }
        return null;
    }

    /** One line for the report. */
    String describe() {
        return String.format(Locale.ROOT, "%,d connections (%,d consumers each), %d fleet process(es), %d source"
                + " address(es)", connections, perConnection, processes, sourceAddresses());
    }
}
