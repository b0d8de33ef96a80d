package io.github.pulsarbroadcast.bench.floor;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertTrue;

import io.netty.buffer.ByteBuf;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pulsar.common.api.proto.CommandSubscribe.SubType;
import org.apache.pulsar.common.protocol.Commands;
import org.testng.annotations.Test;

/**
 * The floor server waits for writability (benchmarks.md, "The floor's own capacity, by connection layout"): a
 * consumer that stops reading gets no more frames queued than the high water mark (plus the frame that crossed it),
 * and once it reads again every frame it is owed arrives. Without the wait every frame of every message queued in the
 * server's heap (26 MB here; at 5,000 consumers per connection and 500,000 deliveries per second it tipped the server
 * into full collections).
 *
 * <p>Threading: the test thread drives; one thread drains the socket in the second half.
 */
public class FloorServerBackPressureTest {

    private static final int MESSAGE_SIZE = 64 * 1024;
    private static final int MESSAGES = 400;

    @Test(groups = "unit", timeOut = 60_000)
    public void aConsumerThatStopsReadingHoldsAtMostTheHighWaterMark() throws Exception {
        FloorSpec spec = new FloorSpec();
        spec.messageSize = MESSAGE_SIZE;
        spec.rate = 2_000;
        spec.totalMessages = MESSAGES;
        FloorServer server = new FloorServer(spec);
        try (Socket socket = new Socket()) {
            socket.setReceiveBufferSize(64 * 1024);
            URI url = URI.create(server.serviceUrl());
            socket.connect(new InetSocketAddress(url.getHost(), url.getPort()), 10_000);
            OutputStream out = socket.getOutputStream();
            send(out, Commands.newConnect("none", (String) null, "floor-test", null));
            send(out, Commands.newSubscribe("persistent://t/n/topic", "s", 1, 2, SubType.Failover, 0, "c", 0L));
            send(out, Commands.newFlow(1, 1_000_000));
            await().atMost(Duration.ofSeconds(10)).until(() -> server.subscribedCount() == 1);
            server.start();
            await().atMost(Duration.ofSeconds(30)).until(server::done);
            // Every published message handed to the event loop has been pumped by then (0.5 s at 400 messages).
            await().pollDelay(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5)).until(() -> true);
            long pending = server.pendingWriteBytes();
            assertTrue(pending <= (4 << 20) + 2 * MESSAGE_SIZE, pending + " bytes wait for a consumer that reads"
                    + " nothing: more than the high water mark");
            AtomicLong read = new AtomicLong();
            Thread drain = new Thread(() -> {
                byte[] buf = new byte[1 << 16];
                try (InputStream in = socket.getInputStream()) {
                    for (int n = in.read(buf); n >= 0; n = in.read(buf)) {
                        read.addAndGet(n);
                    }
                } catch (java.io.IOException e) {
                    // closed at the end of the test
                }
            }, "floor-test-drain");
            drain.setDaemon(true);
            drain.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> read.get() >= (long) MESSAGES * MESSAGE_SIZE);
        } finally {
            server.close();
        }
    }

    private static void send(OutputStream out, ByteBuf command) throws java.io.IOException {
        try {
            byte[] bytes = new byte[command.readableBytes()];
            command.readBytes(bytes);
            out.write(bytes);
            out.flush();
        } finally {
            command.release();
        }
    }
}
