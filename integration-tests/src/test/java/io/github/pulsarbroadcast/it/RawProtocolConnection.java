package io.github.pulsarbroadcast.it;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import org.apache.pulsar.common.api.proto.BaseCommand;
import org.apache.pulsar.common.protocol.Commands;

/**
 * One Pulsar binary-protocol connection over a blocking socket, for what the Java client cannot send (a CONNECT that
 * names an original principal, as a proxy's does). Frames are encoded by pulsar-common's {@link Commands}; answers are
 * parsed into pulsar-common's {@link BaseCommand}, a frame's payload skipped, a PING answered.
 *
 * <p>Threading: one thread (the test's); not thread-safe.
 */
final class RawProtocolConnection implements AutoCloseable {

    private static final int READ_TIMEOUT_MILLIS = 30_000;

    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;

    private RawProtocolConnection(Socket socket) throws IOException {
        this.socket = socket;
        this.in = new DataInputStream(socket.getInputStream());
        this.out = socket.getOutputStream();
    }

    /** A TCP connection to the broker of {@code serviceUrl} ({@code pulsar://host:port}); nothing sent yet. */
    static RawProtocolConnection open(String serviceUrl) throws IOException {
        URI url = URI.create(serviceUrl);
        Socket socket = new Socket();
        try {
            socket.connect(new InetSocketAddress(url.getHost(), url.getPort()), READ_TIMEOUT_MILLIS);
            socket.setSoTimeout(READ_TIMEOUT_MILLIS);
            return new RawProtocolConnection(socket);
        } catch (IOException | RuntimeException e) {
            socket.close();
            throw e;
        }
    }

    /** A connection to {@code serviceUrl} that sent CONNECT (no authentication) and was answered CONNECTED. */
    static RawProtocolConnection connected(String serviceUrl) throws IOException {
        RawProtocolConnection c = open(serviceUrl);
        try {
            String noAuthData = null;
            c.send(Commands.newConnect("none", noAuthData, Commands.getCurrentProtocolVersion(), "raw-test", null,
                    null, null, null));
            BaseCommand answer = c.next();
            if (answer.getType() != BaseCommand.Type.CONNECTED) {
                throw new IOException("not connected: " + answer.getType());
            }
            return c;
        } catch (IOException | RuntimeException e) {
            c.close();
            throw e;
        }
    }

    /** Writes {@code frame} and releases it. */
    void send(ByteBuf frame) throws IOException {
        try {
            byte[] bytes = new byte[frame.readableBytes()];
            frame.readBytes(bytes);
            out.write(bytes);
            out.flush();
        } finally {
            frame.release();
        }
    }

    /**
     * The next command from the broker other than a PING (answered with a PONG); a frame's payload, if any, is
     * skipped.
     */
    BaseCommand next() throws IOException {
        while (true) {
            int total = in.readInt();
            int commandSize = in.readInt();
            byte[] command = new byte[commandSize];
            in.readFully(command);
            in.readFully(new byte[total - 4 - commandSize]); // a payload, not looked at
            BaseCommand parsed = new BaseCommand();
            parsed.parseFrom(Unpooled.wrappedBuffer(command), commandSize);
            if (parsed.getType() == BaseCommand.Type.PING) {
                send(Commands.newPong());
            } else {
                return parsed;
            }
        }
    }

    /** True when the broker closes the connection before it sends another byte; false when it sends one. */
    boolean closedWithoutAnswer() throws IOException {
        return in.read() == -1;
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
