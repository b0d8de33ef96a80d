package io.github.pulsarbroadcast.bench.floor;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetSocketAddress;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Recorder;
import org.apache.pulsar.common.allocator.PulsarByteBufAllocator;
import org.apache.pulsar.common.api.proto.MessageMetadata;
import org.apache.pulsar.common.intercept.AppendBrokerTimestampMetadataInterceptor;
import org.apache.pulsar.common.intercept.BrokerEntryMetadataInterceptor;
import org.apache.pulsar.common.protocol.ByteBufPair;
import org.apache.pulsar.common.protocol.Commands;

/**
 * The floor server: a trivial Pulsar-speaking server on a loopback port with no broker behind it. On {@link #start}
 * it publishes {@code totalMessages} messages of {@code messageSize} bytes at a fixed rate to every subscribed
 * consumer; each entry is encoded once, the way a producer and the broker would have made it (metadata with sequence
 * id, publish time and the intended send time as event time, CRC32C checksum, broker entry metadata with the broker
 * timestamp), and every consumer's MESSAGE frame carries a copy of that entry, the frames of a connection's pass in
 * one buffer as the broker writes them ({@link FloorFrames}), as long as its connection is writable
 * ({@link FloorHandler}: back-pressure, as a broker's). What a consumer fleet costs against it, and its
 * latency, are this machine's floor for the workload.
 *
 * <p>Threading: one scheduler thread ("floor-publisher") publishes; {@link #entries}, {@link #published} (volatile)
 * and the counters are written by it and read by the event loops; connections are in a concurrent set; the
 * {@link FloorHandler}s live on their event loops; the status thread reads the counters ({@link #maxLag} under the
 * monitor).
 */
public final class FloorServer {

    /** Outbound bytes per connection above which it stops writing, and below which it writes again. */
    private static final int WATER_HIGH = 4 << 20;
    private static final int WATER_LOW = 2 << 20;

    private final FloorSpec spec;
    private final EventLoopGroup loops;
    private final Channel server;
    private final String serviceUrl;
    private final byte[] payload;
    private final long periodNanos;
    private final Set<BrokerEntryMetadataInterceptor> interceptors =
            Set.of(new AppendBrokerTimestampMetadataInterceptor());
    private final AtomicReferenceArray<ByteBuf> entries;
    private final Set<FloorHandler> connections = ConcurrentHashMap.newKeySet();
    private final AtomicInteger subscribed = new AtomicInteger();
    private final LongAdder acks = new LongAdder();
    private final Recorder lag = new Recorder(3);
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(
            new DefaultThreadFactory("floor-publisher", true));
    private volatile int published = -1;
    private volatile long startNanos;
    private volatile long lastSendNanos;
    private volatile long firstMeasuredSendNanos;
    private volatile ScheduledFuture<?> task;
    /** The largest send lag so far (ms) and the interval histogram to recycle; guarded by {@code this}. */
    private long maxLag;
    private org.HdrHistogram.Histogram lagInterval;

    public FloorServer(FloorSpec spec) throws InterruptedException {
        this.spec = spec;
        this.entries = new AtomicReferenceArray<>(spec.totalMessages);
        this.payload = new byte[spec.messageSize];
        new Random(42).nextBytes(payload);
        this.periodNanos = Math.max(1, Math.round(1e9 / spec.rate));
        boolean epoll = Epoll.isAvailable();
        DefaultThreadFactory threads = new DefaultThreadFactory("floor-io", true);
        this.loops = epoll ? new EpollEventLoopGroup(spec.ioThreads, threads)
                : new NioEventLoopGroup(spec.ioThreads, threads);
        ServerBootstrap b = new ServerBootstrap().group(loops)
                .channel(epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class)
                .option(ChannelOption.SO_BACKLOG, 4_096)
                .childOption(ChannelOption.TCP_NODELAY, true)
                // Back-pressure (FloorHandler): up to 4 MiB (about 3,700 frames of a 1 KB message) waits per
                // connection; a message to 5,000 consumers on one connection (5.5 MB) goes out in two turns.
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(WATER_LOW, WATER_HIGH))
                .childOption(ChannelOption.ALLOCATOR, PulsarByteBufAllocator.DEFAULT)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast("encoder", ByteBufPair.ENCODER);
                        ch.pipeline().addLast("frameDecoder", new LengthFieldBasedFrameDecoder(
                                Commands.DEFAULT_MAX_MESSAGE_SIZE + Commands.MESSAGE_SIZE_FRAME_PADDING, 0, 4, 0, 4));
                        ch.pipeline().addLast("handler", new FloorHandler(FloorServer.this));
                    }
                });
        this.server = b.bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
        this.serviceUrl = "pulsar://127.0.0.1:" + ((InetSocketAddress) server.localAddress()).getPort();
    }

    public String serviceUrl() {
        return serviceUrl;
    }

    /** The highest sequence number published so far, or -1. */
    int published() {
        return published;
    }

    /** The entry of message {@code seq}, or null. */
    ByteBuf entry(int seq) {
        return seq >= 0 && seq < entries.length() ? entries.get(seq) : null;
    }

    void opened(FloorHandler h) {
        connections.add(h);
    }

    void closed(FloorHandler h) {
        connections.remove(h);
    }

    void subscribed() {
        subscribed.incrementAndGet();
    }

    void acked(int messages) {
        acks.add(messages);
    }

    /** Consumers subscribed so far. */
    int subscribedCount() {
        return subscribed.get();
    }

    /** Bytes written to the connections and not yet taken by their sockets (any thread; a test's probe). */
    long pendingWriteBytes() {
        long pending = 0;
        for (FloorHandler h : connections) {
            io.netty.channel.ChannelOutboundBuffer out = h.context().channel().unsafe().outboundBuffer();
            pending += out == null ? 0 : out.totalPendingWriteBytes();
        }
        return pending;
    }

    /** Starts publishing now; returns the start ({@link System#nanoTime}). */
    public long start() {
        startNanos = System.nanoTime();
        task = scheduler.scheduleAtFixedRate(this::publishNext, 0, periodNanos, TimeUnit.NANOSECONDS);
        return startNanos;
    }

    private void publishNext() {
        int seq = published + 1;
        if (seq >= spec.totalMessages) {
            task.cancel(false);
            return;
        }
        long intended = startNanos + seq * periodNanos;
        long now = System.nanoTime();
        lag.recordValue(Math.max(0, TimeUnit.NANOSECONDS.toMillis(now - intended)));
        lastSendNanos = now;
        if (seq == spec.warmupMessages) {
            firstMeasuredSendNanos = now;
        }
        entries.set(seq, encode(seq, intended));
        published = seq;
        for (FloorHandler h : connections) {
            h.context().executor().execute(h::publish);
        }
    }

    /** The entry as the broker stores and sends it: metadata, checksum, payload, and broker entry metadata. */
    private ByteBuf encode(int seq, long intendedNanos) {
        MessageMetadata md = new MessageMetadata().setProducerName("floor").setSequenceId(seq)
                .setPublishTime(System.currentTimeMillis()).setUncompressedSize(payload.length);
        if (intendedNanos > 0) {
            md.setEventTime(intendedNanos);
        }
        ByteBuf metadataAndPayload = Commands.serializeMetadataAndPayload(Commands.ChecksumType.Crc32c, md,
                Unpooled.wrappedBuffer(payload));
        return Commands.addBrokerEntryMetadata(metadataAndPayload, interceptors);
    }

    /** Stops publishing (what has not been published never will be). */
    public void stop() {
        if (task != null) {
            task.cancel(false);
        }
    }

    /** True once the last message is out (or {@link #stop} was called). */
    public boolean done() {
        return published >= spec.totalMessages - 1 || (task != null && task.isCancelled());
    }

    /**
     * {@code status published lastSendNanos firstMeasuredSendNanos lagMaxMs connections subscribed acks
     * startNanos}: the counters for the benchmark JVM.
     */
    public String status() {
        return String.format("status %d %d %d %d %d %d %d %d", published + 1, lastSendNanos, firstMeasuredSendNanos,
                lagMax(), connections.size(), subscribed.get(), acks.sum(), startNanos);
    }

    private synchronized long lagMax() {
        lagInterval = lag.getIntervalHistogram(lagInterval);
        maxLag = Math.max(maxLag, lagInterval.getMaxValue());
        return maxLag;
    }

    public void close() {
        scheduler.shutdownNow();
        server.close();
        loops.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
}
