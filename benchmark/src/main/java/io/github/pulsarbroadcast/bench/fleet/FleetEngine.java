package io.github.pulsarbroadcast.bench.fleet;

import io.github.pulsarbroadcast.bench.core.ConsumerTracker;
import io.github.pulsarbroadcast.bench.core.Deliveries;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.FastThreadLocal;
import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.apache.pulsar.common.allocator.PulsarByteBufAllocator;
import org.apache.pulsar.common.net.ServiceURI;
import org.apache.pulsar.common.protocol.Commands;

/**
 * The simulated consumers of one fleet process on Netty: builds the {@link ClientGroup}s (one per
 * {@code consumersPerConnection} consumers) and their {@link SimConsumer}s, opens connections (from the loopback
 * source address the connection's global index calls for), paces the first subscribes ({@code connectRate}, at most
 * {@code connectConcurrency} in flight), pauses and resumes the backlog group, closes everything, and writes the
 * trackers, histograms and counters for the benchmark JVM ({@link #writeState}).
 *
 * <p>Threading: the control thread (the fleet process's main) calls the public methods; one connector thread
 * starts the subscribes; the consumers live on the Netty event loops. Counters are atomics and {@link LongAdder}s,
 * {@link #phaseStartNanos} and {@link #closing} are volatile (written under the monitor, by {@link #connectAll} and
 * {@link #close}, which also guards {@link #connector}), the resolved-address cache is concurrent; the rest is
 * final.
 */
public final class FleetEngine {

    private final FleetSpec spec;
    private final ConsumerTracker[] trackers;
    private final Deliveries deliveries;
    private final EventLoopGroup loops;
    private final Bootstrap bootstrap;
    /** The service URL's hosts, one or more ({@code pulsar://a:6650,b:6650}), as the stock client takes them. */
    private final InetSocketAddress[] serviceAddresses;
    private final SimConsumer[] consumers;
    private final ClientGroup[] groups;
    private final Map<String, InetSocketAddress> resolved = new ConcurrentHashMap<>();
    private final FastThreadLocal<EntryReader> readers = new FastThreadLocal<>() {
        @Override
        protected EntryReader initialValue() {
            return new EntryReader();
        }
    };
    private final AtomicInteger connected = new AtomicInteger();
    private final AtomicInteger failed = new AtomicInteger();
    private final AtomicInteger closed = new AtomicInteger();
    /** Consumers subscribed now (a reconnect counts again once it is subscribed). */
    private final AtomicInteger active = new AtomicInteger();
    /** Successful subscribes, the first ones and every reconnect's. */
    private final LongAdder subscribes = new LongAdder();
    private final LongAdder reconnects = new LongAdder();
    private final LongAdder entryErrors = new LongAdder();
    private final LongAdder connectionsOpened = new LongAdder();
    private final AtomicReference<String> firstError = new AtomicReference<>();
    private volatile long phaseStartNanos;
    private volatile boolean closing;
    private Thread connector;

    /** The client version the simulated consumers announce in CONNECT. */
    static final String CLIENT_VERSION = "pulsar-broadcast-fleet";

    public FleetEngine(FleetSpec spec) {
        this.spec = spec;
        this.trackers = new ConsumerTracker[spec.consumers];
        for (int i = 0; i < spec.consumers; i++) {
            int index = spec.firstConsumer + i;
            trackers[i] = new ConsumerTracker(index, null, ConsumerTracker.inPauseGroup(index, spec.pauseFraction));
        }
        this.deliveries = new Deliveries(trackers, spec.measuredFromSeq, spec.totalMessages, spec.periodNanos);
        boolean epoll = Epoll.isAvailable();
        DefaultThreadFactory threads = new DefaultThreadFactory("fleet-io", true);
        this.loops = epoll ? new EpollEventLoopGroup(spec.ioThreads, threads)
                : new NioEventLoopGroup(spec.ioThreads, threads);
        this.bootstrap = new Bootstrap().channel(epoll ? EpollSocketChannel.class : NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.SO_KEEPALIVE, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 30_000)
                .option(ChannelOption.ALLOCATOR, PulsarByteBufAllocator.DEFAULT);
        this.serviceAddresses = serviceAddresses(spec.serviceUrl);
        int k = Math.max(1, spec.consumersPerConnection);
        this.groups = new ClientGroup[(spec.consumers + k - 1) / k];
        this.consumers = new SimConsumer[spec.consumers];
        Subscriber subscriber = new Subscriber(spec);
        for (int g = 0; g < groups.length; g++) {
            groups[g] = new ClientGroup(this, loops.next(), spec.firstConnection + g);
        }
        for (int i = 0; i < spec.consumers; i++) {
            consumers[i] = new SimConsumer(groups[i / k], i % k, trackers[i], subscriber);
        }
    }

    FleetSpec spec() {
        return spec;
    }

    public Deliveries deliveries() {
        return deliveries;
    }

    EntryReader reader() {
        return readers.get();
    }

    /** The service URL's hosts; a {@link ClientGroup} takes them in turn, as the stock client's resolver does. */
    InetSocketAddress[] serviceAddresses() {
        return serviceAddresses;
    }

    /**
     * The hosts of a service URL with one or more of them ({@code pulsar://host:port[,host:port...]}), parsed by
     * pulsar-common's {@link ServiceURI} as the stock client parses it (a host without a port gets 6650).
     */
    public static InetSocketAddress[] serviceAddresses(String url) {
        String[] hosts = ServiceURI.create(url).getServiceHosts();
        InetSocketAddress[] addresses = new InetSocketAddress[hosts.length];
        for (int i = 0; i < hosts.length; i++) {
            int colon = hosts[i].lastIndexOf(':');
            addresses[i] = new InetSocketAddress(hosts[i].substring(0, colon),
                    Integer.parseInt(hosts[i].substring(colon + 1)));
        }
        return addresses;
    }

    /** {@code pulsar://host:port} resolved once. */
    InetSocketAddress address(String url) {
        return resolved.computeIfAbsent(url, ClientGroup::address);
    }

    long phaseStartNanos() {
        return phaseStartNanos;
    }

    boolean closing() {
        return closing;
    }

    /**
     * The frame decoder of one connection: pulsar-common's frame layout, with the bytes already read discarded after
     * every socket read instead of every 16th (Netty's default). A read rarely ends on a frame boundary, so the decoder
     * keeps the partial frame and appends the next read to it; with the default, the buffer holding them grows over
     * up to 16 reads of a pass (to about 1 MiB at 64 KiB a read), each growth copying the whole buffer into a new one,
     * and the pooled allocator's chunks that such buffers fill are freed and mapped again, page by page. That only
     * happens when a pass reads many times, that is when the fleet has fallen behind: a profile of a fleet behind at
     * 400,000 deliveries per second put 44% of its CPU there (docs/benchmarks.md, experiment F8), so the instrument's
     * cost per delivery grew exactly when it fell behind, and it stayed behind. Discarding after each read keeps one
     * buffer of about two reads per connection. (The broker's own decoder, like the floor server's, keeps Netty's
     * default: they read acknowledgements, not message frames.)
     */
    static LengthFieldBasedFrameDecoder frameDecoder() {
        LengthFieldBasedFrameDecoder decoder = new LengthFieldBasedFrameDecoder(
                Commands.DEFAULT_MAX_MESSAGE_SIZE + Commands.MESSAGE_SIZE_FRAME_PADDING, 0, 4, 0, 4);
        decoder.setDiscardAfterReads(1);
        return decoder;
    }

    /** Opens a connection of {@code group} (on its event loop) to {@code address}; returns its handler at once. */
    FleetHandler open(ClientGroup group, InetSocketAddress address, String proxyTarget, int connectionIndex) {
        FleetHandler handler = new FleetHandler(group, proxyTarget, spec.flushEveryAck);
        Bootstrap b = bootstrap.clone(group.loop()).handler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
                ch.pipeline().addLast("frameDecoder", frameDecoder());
                ch.pipeline().addLast("handler", handler);
            }
        });
        InetSocketAddress local = SourceAddresses.local(connectionIndex, spec.connectionsPerSourceAddress);
        ChannelFuture f = local == null ? b.connect(address) : b.connect(address, local);
        connectionsOpened.increment();
        f.addListener(done -> {
            if (!done.isSuccess()) {
                noteError("connecting to " + address + (local == null ? "" : " from " + local.getAddress()) + ": "
                        + done.cause());
                handler.connectFailed();
            }
        });
        return handler;
    }

    /** Starts subscribing every consumer; connect times count from {@code startNanos} (the benchmark JVM's clock). */
    public synchronized void connectAll(long startNanos) {
        if (connector != null) {
            return;
        }
        phaseStartNanos = startNanos;
        connector = new Thread(this::connectLoop, "fleet-connector");
        connector.setDaemon(true);
        connector.start();
    }

    private void connectLoop() {
        Semaphore inFlight = new Semaphore(Math.max(1, spec.connectConcurrency));
        long start = System.nanoTime();
        for (int i = 0; i < consumers.length && !closing; i++) {
            if (spec.connectRate > 0) {
                long due = start + (long) (i * 1e9 / spec.connectRate);
                for (long wait = due - System.nanoTime(); wait > 0 && !closing; wait = due - System.nanoTime()) {
                    LockSupport.parkNanos(wait);
                }
            }
            try {
                while (!closing && !inFlight.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                    // waiting for a subscribe in flight to finish
                }
            } catch (InterruptedException e) {
                return;
            }
            SimConsumer c = consumers[i];
            groupOf(i).loop().execute(() -> c.start(inFlight::release));
        }
    }

    private ClientGroup groupOf(int local) {
        return groups[local / Math.max(1, spec.consumersPerConnection)];
    }

    /** Pauses the consumers of the backlog experiment's pause group. */
    public void pause() {
        forPauseGroup(true);
    }

    /** Resumes them; each must then catch up with every message up to {@code targetSeq}. */
    public void resume(int targetSeq) {
        deliveries.startCatchUp(targetSeq);
        forPauseGroup(false);
    }

    private void forPauseGroup(boolean pause) {
        for (int i = 0; i < consumers.length; i++) {
            if (trackers[i].pauseGroup()) {
                SimConsumer c = consumers[i];
                groupOf(i).loop().execute(pause ? c::pause : c::resume);
            }
        }
    }

    /**
     * Closes every consumer on the broker and waits for the answers (at most {@code seconds}), then every
     * connection and the event loops. Returns the consumers that did not confirm.
     */
    public synchronized int close(long seconds) throws InterruptedException {
        if (closing) {
            return consumers.length - closed.get();
        }
        closing = true;
        if (connector != null) {
            connector.join(5_000);
        }
        for (int i = 0; i < consumers.length; i++) {
            SimConsumer c = consumers[i];
            groupOf(i).loop().execute(c::close);
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (closed.get() < consumers.length && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        for (ClientGroup g : groups) {
            g.loop().execute(g::closeAll);
        }
        loops.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
        return consumers.length - closed.get();
    }

    /** Consumers subscribed at least once so far. */
    public int connectedCount() {
        return connected.get();
    }

    void consumerConnected() {
        connected.incrementAndGet();
    }

    /** A subscribe succeeded (the first or a reconnect's). */
    void subscribed() {
        active.incrementAndGet();
        subscribes.increment();
    }

    /** A subscribed consumer lost its subscription (the broker closed it or the connection went away). */
    void unsubscribed() {
        active.decrementAndGet();
    }

    void consumerFailed(String why) {
        failed.incrementAndGet();
        noteError(why);
    }

    void consumerClosed() {
        closed.incrementAndGet();
    }

    void reconnected() {
        reconnects.increment();
    }

    void entryFailed(String why) {
        entryErrors.increment();
        noteError(why);
    }

    void noteError(String why) {
        firstError.compareAndSet(null, why);
    }

    /** The counters the benchmark JVM polls, as one status line. */
    public String status() {
        return String.format("status %d %d %d %d %d %d %d %d %d %d %d", connected.get(), failed.get(),
                deliveries.firstReceipts(), deliveries.allReceipts(), deliveries.lastReceiptNanos(),
                deliveries.catchingUp(), deliveries.latency().liveP99(), reconnects.sum(), entryErrors.sum(),
                active.get(), subscribes.sum());
    }

    public String firstError() {
        return firstError.get();
    }

    /** Writes every tracker, the histograms, the fan-out and the counters to {@code file} ({@link FleetState}). */
    public void writeState(Path file) throws IOException {
        try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(file),
                1 << 16))) {
            FleetState.write(out, trackers, deliveries, reconnects.sum(), entryErrors.sum(),
                    connectionsOpened.sum(), firstError.get());
        }
    }
}
