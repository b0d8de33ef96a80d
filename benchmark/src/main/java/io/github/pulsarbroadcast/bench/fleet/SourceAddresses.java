package io.github.pulsarbroadcast.bench.fleet;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Loopback source addresses for many connections. One source address has one range of ephemeral ports
 * ({@code /proc/sys/net/ipv4/ip_local_port_range}, about 28,000 here), so beyond that the connections bind to
 * 127.0.0.2, 127.0.0.3, ... (the whole of 127.0.0.0/8 is loopback on Linux), the way emqtt-bench and similar load
 * generators get past it: connection {@code g} (global index over every fleet process) uses
 * {@code 127.0.0.(1 + g / perAddress)}.
 *
 * <p>Threading: stateless; any thread.
 */
public final class SourceAddresses {

    /** Ports of the range left to everything else on the machine (the broker's own clients, the producer, ...). */
    private static final int SPARE_PORTS = 2_000;
    private static final int MAX_ADDRESSES = 250;

    private SourceAddresses() {
    }

    /** Ephemeral ports of one source address, from the kernel's range (28,232 when it cannot be read). */
    public static int ephemeralPorts() {
        try {
            String[] range = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range"),
                    StandardCharsets.US_ASCII).trim().split("\\s+");
            return Integer.parseInt(range[1]) - Integer.parseInt(range[0]) + 1;
        } catch (IOException | RuntimeException e) {
            return 60_999 - 32_768 + 1;
        }
    }

    /** Connections one source address takes by default: its ephemeral ports less a margin. */
    public static int defaultPerAddress() {
        return Math.max(1, ephemeralPorts() - SPARE_PORTS);
    }

    /** Source addresses {@code connections} need at {@code perAddress} each. */
    public static int addressesFor(long connections, int perAddress) {
        return perAddress <= 0 ? 1 : (int) ((connections + perAddress - 1) / perAddress);
    }

    /** The most addresses this scheme hands out (127.0.0.1 to 127.0.0.250). */
    public static int maxAddresses() {
        return MAX_ADDRESSES;
    }

    /** The local address of connection {@code g}, or null to let the kernel choose (all on 127.0.0.1). */
    static InetSocketAddress local(int g, int perAddress) {
        if (perAddress <= 0) {
            return null;
        }
        int k = g / perAddress;
        if (k >= MAX_ADDRESSES) {
            throw new IllegalStateException("connection " + g + " needs more than " + MAX_ADDRESSES
                    + " loopback source addresses");
        }
        try {
            return new InetSocketAddress(InetAddress.getByAddress(new byte[] {127, 0, 0, (byte) (1 + k)}), 0);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }
}
