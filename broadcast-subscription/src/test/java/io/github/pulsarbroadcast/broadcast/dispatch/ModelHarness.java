package io.github.pulsarbroadcast.broadcast.dispatch;

import io.github.pulsarbroadcast.broadcast.BroadcastConfig;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Properties;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.apache.pulsar.common.protocol.ByteBufPair;

/**
 * The world the model test runs the dispatch core in: a task queue instead of the executor (the test decides when
 * dispatch work runs), a second queue for the background work (periodic position saves), a virtual clock with
 * scheduled tasks, and connections that record what is sent to whom.
 *
 * <p>Threading: single-threaded (the test's thread).
 */
final class ModelHarness implements DispatchLoop {

    /** One delivery as a connection saw it. */
    interface Deliveries {
        void delivered(BroadcastConsumer consumer, WindowEntry entry, long epoch);

        void endOfTopic(long consumerId);
    }

    private final ArrayDeque<Runnable> tasks = new ArrayDeque<>();
    /** Work handed to {@link #background}, run by {@link #runOne} like the dispatch tasks. */
    private final ArrayDeque<Runnable> background = new ArrayDeque<>();
    /**
     * Picks, when both queues hold work, which one {@link #runOne} serves (the model test's random schedule); null:
     * the dispatch tasks first.
     */
    java.util.Random backgroundOrder;
    /** When set, {@link #background} refuses work as an executor that has shut down does. */
    boolean refusingBackground;
    private final PriorityQueue<Object[]> scheduled = new PriorityQueue<>((a, b) -> Long.compare((long) a[0],
            (long) b[0]) != 0 ? Long.compare((long) a[0], (long) b[0]) : Long.compare((long) a[2], (long) b[2]));
    private long sequence;
    long nowNanos = 1_000_000_000L;

    @Override
    public void post(Runnable task) {
        tasks.add(task);
    }

    @Override
    public void schedule(Runnable task, long delayMs) {
        scheduled.add(new Object[] {nowNanos + delayMs * 1_000_000L, task, sequence++});
    }

    @Override
    public java.util.concurrent.Executor background() {
        return r -> {
            if (refusingBackground) {
                throw new java.util.concurrent.RejectedExecutionException("shut down");
            }
            background.add(r);
        };
    }

    /** Takes the last queued dispatch task out of the queue: a test posts it later (another thread's post, late). */
    Runnable takeLastTask() {
        return tasks.pollLast();
    }

    /** Runs one queued task, a dispatch task or background work; false when there is none. */
    boolean runOne() {
        boolean fromBackground = !background.isEmpty()
                && (tasks.isEmpty() || backgroundOrder != null && backgroundOrder.nextBoolean());
        Runnable r = fromBackground ? background.poll() : tasks.poll();
        if (r == null) {
            return false;
        }
        r.run();
        return true;
    }

    /** Runs queued tasks and background work until none is left. */
    void runAll() {
        while (runOne()) {
            // next
        }
    }

    /** Runs queued tasks and {@code ledger}'s pending answers until neither has any left. */
    void settle(ModelLedger ledger) {
        while (runOne() || ledger.completeOne()) {
            // until quiet
        }
    }

    /** Publishes {@code n} entries to {@code ledger}, one at a time, each handled before the next. */
    List<PositionImpl> publishSettled(ModelLedger ledger, int n) {
        List<PositionImpl> published = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            published.add(ledger.publish(false));
            settle(ledger);
        }
        return published;
    }

    /** Joins a consumer of {@code engine} that records what it is sent into {@code into}, with 1,000 permits. */
    BroadcastConsumer joinWithPermits(SubscriptionEngine engine, ModelLedger ledger, long id, String name,
                                      List<PositionImpl> into, InitialPosition start) throws Exception {
        BroadcastConsumer bc = engine.join(id, name, recording(into), start, 0);
        settle(ledger);
        engine.flow(bc, 1000);
        settle(ledger);
        return bc;
    }

    /** How much background work is queued. */
    int backgroundQueued() {
        return background.size();
    }

    boolean hasTasks() {
        return !tasks.isEmpty() || !background.isEmpty();
    }

    /** How many tasks are queued (not counting scheduled ones that are not due). */
    int queued() {
        return tasks.size();
    }

    /** Advances the clock, posting every scheduled task that falls due. */
    void advance(long millis) {
        nowNanos += millis * 1_000_000L;
        while (!scheduled.isEmpty() && (long) scheduled.peek()[0] <= nowNanos) {
            post((Runnable) scheduled.poll()[1]);
        }
    }

    /** The model's wall clock follows its virtual time (from an arbitrary epoch). */
    @Override
    public long wallMillis() {
        return 1_700_000_000_000L + nowNanos / 1_000_000L;
    }

    long nextScheduledInMs() {
        return scheduled.isEmpty() ? -1 : Math.max(0, ((long) scheduled.peek()[0] - nowNanos) / 1_000_000L);
    }

    /** An engine over a fresh model ledger (ledgers of 5 entries from id 3), driven by this world. */
    SubscriptionEngine newEngine(String topic) {
        return newEngine(topic, new ModelLedger(3, 5));
    }

    /** An engine over {@code ledger} (window of 10, reads of 5, 60 s grace), driven by this world. */
    SubscriptionEngine newEngine(String topic, ModelLedger ledger) {
        return newEngine(topic, ledger, config(10, 5, 60, 1000, 1000));
    }

    /** An engine over {@code ledger} with {@code config}, driven by this world. */
    SubscriptionEngine newEngine(String topic, ModelLedger ledger, BroadcastConfig config) {
        return new SubscriptionEngine(topic, "fleet", -1, ledger, config,
                io.github.pulsarbroadcast.broadcast.WindowBudget.unlimited(), this, () -> nowNanos,
                new SubscriptionStart(new ModelPositionStore(), null, false));
    }

    /** A connection that adds the position of every entry it is sent to {@code positions}. */
    static Connection recording(List<PositionImpl> positions) {
        return new Connection(new Deliveries() {
            @Override
            public void delivered(BroadcastConsumer consumer, WindowEntry entry, long epoch) {
                positions.add(entry.position);
            }

            @Override
            public void endOfTopic(long consumerId) {
            }
        });
    }

    /** A connection that drops whatever it is sent. */
    static Connection discarding() {
        return new Connection(new Deliveries() {
            @Override
            public void delivered(BroadcastConsumer consumer, WindowEntry entry, long epoch) {
            }

            @Override
            public void endOfTopic(long consumerId) {
            }
        });
    }

    static BroadcastConfig config(int windowEntries, int readBatch, int graceSeconds, int maxAckRanges,
                                  int positionSyncIntervalMs) {
        return config(windowEntries, readBatch, graceSeconds, graceSeconds, maxAckRanges, positionSyncIntervalMs);
    }

    static BroadcastConfig config(int windowEntries, int readBatch, int graceSeconds, int retentionSeconds,
                                  int maxAckRanges, int positionSyncIntervalMs) {
        Properties p = new Properties();
        p.setProperty("broadcastWindowMaxEntries", Integer.toString(windowEntries));
        p.setProperty("broadcastMaxReadBatchSize", Integer.toString(readBatch));
        p.setProperty("broadcastReconnectGraceSeconds", Integer.toString(graceSeconds));
        p.setProperty("broadcastConsumerRetentionSeconds", Integer.toString(retentionSeconds));
        p.setProperty("broadcastPositionSyncIntervalMs", Integer.toString(positionSyncIntervalMs));
        p.setProperty("broadcastMaxAckRangesPerConsumer", Integer.toString(maxAckRanges));
        return BroadcastConfig.from(p);
    }

    /** A client connection that records deliveries; it can be told to reject sends (event loop shut down). */
    static final class Connection implements ConsumerConnection {
        private final Deliveries deliveries;
        boolean rejecting;
        final List<ConnectionSend> rejected = new ArrayList<>();

        Connection(Deliveries deliveries) {
            this.deliveries = deliveries;
        }

        @Override
        public void submit(ConnectionSend send) {
            if (rejecting) {
                throw new java.util.concurrent.RejectedExecutionException("event loop shut down");
            }
            try {
                send.forEachDelivery(deliveries::delivered);
            } finally {
                send.release();
            }
        }

        @Override
        public void reachedEndOfTopic(long consumerId) {
            deliveries.endOfTopic(consumerId);
        }

        @Override
        public boolean receivesBrokerEntryMetadata() {
            return false;
        }

        @Override
        public InitialPosition takeBroadcastJoin(long consumerId) {
            return null;
        }

        @Override
        public void registerBroadcastConsumer(long consumerId, BroadcastConsumer consumer) {
        }

        @Override
        public void forgetBroadcastConsumer(long consumerId, BroadcastConsumer consumer) {
        }

        /** What a liveness probe answers (a test may leave it pending): alive unless a test says otherwise. */
        java.util.concurrent.CompletableFuture<Boolean> liveness =
                java.util.concurrent.CompletableFuture.completedFuture(true);
        /** Probes asked of this connection. */
        final java.util.concurrent.atomic.AtomicInteger probes = new java.util.concurrent.atomic.AtomicInteger();
        /** The timeout of the last probe. */
        volatile long lastProbeTimeoutMs = -1;

        @Override
        public java.util.concurrent.CompletableFuture<Boolean> probeLiveness(long timeoutMs) {
            probes.incrementAndGet();
            lastProbeTimeoutMs = timeoutMs;
            return liveness;
        }

        @Override
        public ChannelHandlerContext ctx() {
            throw new UnsupportedOperationException();
        }

        @Override
        public ChannelHandlerContext flushContext() {
            throw new UnsupportedOperationException();
        }

        @Override
        public boolean writesFramesDirectly() {
            return false;
        }

        @Override
        public ByteBufPair newMessageAndIntercept(long consumerId, long ledgerId, long entryId, int partition,
                                                  int redeliveryCount, ByteBuf metadataAndPayload, long[] ackSet,
                                                  String topic, long epoch) {
            throw new UnsupportedOperationException();
        }
    }
}
