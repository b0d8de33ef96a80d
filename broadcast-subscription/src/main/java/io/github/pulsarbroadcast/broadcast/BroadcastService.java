package io.github.pulsarbroadcast.broadcast;

import io.github.pulsarbroadcast.broadcast.metrics.PublishLatencies;
import io.github.pulsarbroadcast.broadcast.positions.ChunkReads;
import io.github.pulsarbroadcast.broadcast.positions.CursorDeletions;
import io.github.pulsarbroadcast.broadcast.positions.MetadataPositionStore;
import io.github.pulsarbroadcast.broadcast.positions.PositionStore;
import io.github.pulsarbroadcast.executor.SubscriptionOrderedExecutor;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.common.naming.TopicName;
import org.apache.pulsar.common.util.Codec;

/**
 * What the plugin owns on one broker: its configuration, the subscription-keyed executor that runs broadcast
 * dispatch (ordered per subscription) and acknowledgements (on random threads), the broker's scheduler for
 * periodic work, and the saved consumer positions of its subscriptions ({@link #positionStore}; removed with the
 * subscription's managed cursor, wherever it is deleted: {@link CursorDeletions}).
 *
 * <p>Threading: immutable references, created in {@code BroadcastBrokerInterceptor#initialize} before any
 * connection exists and shared by every connection and subscription; {@link #close} runs once at broker shut-down.
 */
public final class BroadcastService implements AutoCloseable {

    private final PulsarService pulsar;
    private final BroadcastConfig config;
    private final SubscriptionOrderedExecutor executor;
    private final boolean onlyInterceptor;
    private final WindowBudget windowBudget;
    private final PublishLatencies publishLatencies = new PublishLatencies();
    /** How many times a connection stopped reading because too many of its acks waited for the executor. */
    private final LongAdder ackReadPauses = new LongAdder();
    /** One read of saved positions (head or chunk) at a time on this broker's metadata store ({@link ChunkReads}). */
    private final ChunkReads chunkReads = new ChunkReads();
    /**
     * Captures and encodes the periodic saves of consumer positions, off the dispatch threads and off the broker's
     * shared scheduler (a save at 100,000 consumers takes tens of ms): one daemon thread for the broker.
     */
    private final ExecutorService positionSaves = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "broadcast-position-saves");
        t.setDaemon(true);
        return t;
    });

    public BroadcastService(PulsarService pulsar, BroadcastConfig config) {
        this.pulsar = pulsar;
        this.config = config;
        // The plugin is loaded as a broker interceptor, so the configured set holds at least its own name.
        this.onlyInterceptor = pulsar.getConfiguration().getBrokerInterceptors().size() <= 1;
        this.windowBudget = new WindowBudget(config.windowBrokerMaxBytes());
        this.executor = SubscriptionOrderedExecutor.builder()
                .name("broadcast-dispatch")
                .numThreads(config.executorThreads())
                .slowTaskThreshold(java.time.Duration.ofMillis(config.executorSlowTaskMs()))
                .build();
        if (pulsar.getLocalMetadataStore() != null) {
            pulsar.getLocalMetadataStore().registerListener(new CursorDeletions(pulsar.getLocalMetadataStore()));
        }
    }

    /**
     * The store of saved consumer positions of {@code subscription} on {@code topic}; {@code ownsTopic}: whether this
     * broker still owns the topic (a store of a topic that left stands down rather than take the positions over).
     */
    public PositionStore positionStore(String topic, String subscription,
                                       Supplier<CompletableFuture<Boolean>> ownsTopic) {
        return new MetadataPositionStore(pulsar.getLocalMetadataStore(),
                TopicName.get(topic).getPersistenceNamingEncoding(), Codec.encode(subscription),
                "[" + topic + "][" + subscription + "]", MetadataPositionStore.DEFAULT_CHUNK_BYTES, chunkReads,
                ownsTopic);
    }

    public PulsarService pulsar() {
        return pulsar;
    }

    public BroadcastConfig config() {
        return config;
    }

    /** Runs dispatch work ordered per subscription, and acknowledgements unordered. */
    public SubscriptionOrderedExecutor executor() {
        return executor;
    }

    /**
     * Whether the plugin is the broker's only interceptor. Only then may broadcast sends skip the stock per-message
     * interceptor calls ({@code onPulsarCommand}, {@code messageDispatched}), whose only listener would be the
     * plugin itself, which ignores them.
     */
    public boolean onlyInterceptor() {
        return onlyInterceptor;
    }

    /** The receive-to-persisted stage of every topic with a broadcast subscription here. */
    public PublishLatencies publishLatencies() {
        return publishLatencies;
    }

    /**
     * Counts the times a connection of this broker stopped reading because {@code broadcastMaxPendingAcksPerConnection}
     * of its acks waited for the executor ({@code broadcastAcksOnEventLoop=false} only); any thread.
     */
    public LongAdder ackReadPauses() {
        return ackReadPauses;
    }

    /** The bytes all broadcast windows of this broker may hold together. */
    public WindowBudget windowBudget() {
        return windowBudget;
    }

    /**
     * The broker's shared scheduler, for periodic per-subscription work (which then hops to {@link #executor}; the
     * rare close of a subscription whose topic left the broker without closing it runs here).
     */
    public ScheduledExecutorService scheduler() {
        return pulsar.getExecutor();
    }

    /** Where the periodic saves of consumer positions are captured and encoded (one thread). */
    public Executor positionSaves() {
        return positionSaves;
    }

    @Override
    public void close() {
        executor.shutdown(Duration.ofSeconds(10));
        // A periodic save cut short loses nothing: each subscription saved its positions when it closed.
        positionSaves.shutdownNow();
    }
}
