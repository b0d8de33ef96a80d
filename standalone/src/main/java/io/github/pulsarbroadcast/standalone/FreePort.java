package io.github.pulsarbroadcast.standalone;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;

/**
 * Asks the OS for a free TCP port on the loopback address, for the one server that cannot bind port 0 itself (a
 * bookie registers its address before it binds); and checks a port option before anything starts
 * ({@link #problem}).
 *
 * <p>Threading: stateless; any thread.
 */
final class FreePort {

    private FreePort() {
    }

    /**
     * Why port option {@code option} set to {@code port} cannot be used on {@code address} (null: every address):
     * out of range, or already in use; null when it can (0, which lets the OS pick, always can). Without it a bad or
     * busy port failed seconds later, after ZooKeeper and the bookie had started, with a stack trace naming no option.
     */
    static String problem(String option, int port, String address) {
        if (port < 0 || port > 65_535) {
            return option + " " + port + ": not a TCP port (0-65535; 0: the OS picks one)";
        }
        if (port == 0) {
            return null;
        }
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(address == null ? new InetSocketAddress(port) : new InetSocketAddress(address, port));
            return null;
        } catch (IOException | IllegalArgumentException | SecurityException e) {
            return option + " " + port + ": cannot listen on " + (address == null ? "every address" : address)
                    + " (" + e.getMessage() + "); is another server using it?";
        }
    }

    static int pick() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            socket.setReuseAddress(true);
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("No free port on the loopback address", e);
        }
    }
}
