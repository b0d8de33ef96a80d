package io.github.pulsarbroadcast.standalone;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;

/**
 * Asks the OS for a free TCP port on the loopback address, for the one server that cannot bind port 0 itself (a
 * bookie registers its address before it binds).
 *
 * <p>Threading: stateless; any thread.
 */
final class FreePort {

    private FreePort() {
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
