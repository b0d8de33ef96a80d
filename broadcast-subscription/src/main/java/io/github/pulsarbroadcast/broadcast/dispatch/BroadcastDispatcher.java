package io.github.pulsarbroadcast.broadcast.dispatch;

import io.github.pulsarbroadcast.broadcast.BroadcastService;
import io.github.pulsarbroadcast.broadcast.metrics.LatencyHistogram;
import io.github.pulsarbroadcast.executor.SubscriptionKey;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.broker.service.BrokerServiceException;
import org.apache.pulsar.broker.service.BrokerServiceException.ConsumerBusyException;
import org.apache.pulsar.broker.service.BrokerServiceException.ServerMetadataException;
import org.apache.pulsar.broker.service.Consumer;
import org.apache.pulsar.broker.service.Dispatcher;
import org.apache.pulsar.broker.service.RedeliveryTracker;
import org.apache.pulsar.broker.service.RedeliveryTrackerDisabled;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.apache.pulsar.common.api.proto.CommandSubscribe.SubType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one dispatcher of a broadcast subscription, as stock Pulsar sees it: the {@link Dispatcher} interface (add and
 * remove consumers, flow, redelivery, close, reset) over the {@link SubscriptionEngine} that does the work. It maps
 * stock {@link Consumer}s to the engine's {@link BroadcastConsumer}s, runs the periodic tasks, and publishes
 * consumer stats.
 *
 * <p>Threading: the engine's dispatch work runs on the subscription's thread of the subscription-keyed executor. {@link
 * #members} is a concurrent map because stock Pulsar adds and removes consumers on its own threads. {@link
 * #disconnectFuture} is guarded by {@code this}; the scheduler tasks are {@link PeriodicTasks}. Consumer stats are
 * published by a task of the broker's scheduler ({@link #publishStats}, through {@link StockConsumerStats}), which only
 * reads the membership map. The periodic sync's task runs on that scheduler too and only posts to the dispatch thread,
 * except when the subscription's topic left the broker without closing it: it then closes the subscription there
 * ({@link BroadcastSubscription#closeIfOrphaned}).
 */
public final class BroadcastDispatcher implements Dispatcher {

    private static final Logger log = LoggerFactory.getLogger(BroadcastDispatcher.class);
    private static final long CLOSE_SAVE_TIMEOUT_SECONDS = 10;

    private final BroadcastSubscription subscription;
    private final BroadcastService service;
    private final SubscriptionKey key;
    private final SubscriptionEngine engine;
    private final Map<Consumer, BroadcastConsumer> members = new ConcurrentHashMap<>();
    private final ConsumerListView consumerList = new ConsumerListView(members.keySet());
    private final StockConsumerStats stockStats = new StockConsumerStats();

    /** Completed when the last consumer leaves after a disconnect request; guarded by {@code this}. */
    private CompletableFuture<Void> disconnectFuture;
    private final PeriodicTasks periodic;
    private final String topicName;
    /** The topic's receive-to-persisted histogram while registered; guarded by {@code this} (null when not). */
    private LatencyHistogram receiveToPersisted;

    BroadcastDispatcher(BroadcastSubscription subscription, SubscriptionStorage storage, String topicName,
                        int partitionIndex, BroadcastService service, SubscriptionStart start) {
        this.subscription = subscription;
        this.service = service;
        this.key = SubscriptionKey.of(topicName, subscription.getName());
        this.topicName = topicName;
        this.engine = new SubscriptionEngine(topicName, subscription.getName(), partitionIndex, storage,
                service.config(), service.windowBudget(), new ServiceDispatchLoop(service, key), System::nanoTime,
                start);
        this.periodic = new PeriodicTasks(service.scheduler(), this::tick, service.config().markDeleteIntervalMs(),
                this::publishStats, service.config().statsIntervalMs());
        startPeriodicTasks();
    }

    /** Starts the cursor sync (posted to the dispatch thread) and the stats publication (on the scheduler). */
    private synchronized void startPeriodicTasks() {
        if (receiveToPersisted == null) {
            receiveToPersisted = service.publishLatencies().register(topicName);
        }
        periodic.start();
    }

    /**
     * The periodic sync, posted to the dispatch thread, unless the subscription's topic has left this broker without
     * closing it ({@link BroadcastSubscription#closeIfOrphaned}; its close cancels this task). Scheduler thread.
     */
    private void tick() {
        if (!subscription.closeIfOrphaned()) {
            engine.post(engine.syncTask);
        }
    }

    /** The executor key this subscription's dispatch work is ordered on. */
    public SubscriptionKey key() {
        return key;
    }

    // ----- joining and leaving -----

    /** Attaches a stock consumer as a broadcast consumer (see {@link SubscriptionEngine#join}). */
    void join(Consumer consumer, ConsumerConnection cnx, InitialPosition initialPosition)
            throws BrokerServiceException {
        if (subscription.isMaxConsumersReached(members.size())) {
            throw new ConsumerBusyException("Subscription reached max consumers limit");
        }
        BroadcastConsumer bc = engine.join(consumer.consumerId(), consumer.consumerName(), cnx, initialPosition,
                consumer.getConsumerEpoch());
        members.put(consumer, bc);
        cnx.registerBroadcastConsumer(consumer.consumerId(), bc);
    }

    /**
     * A subscribe whose consumer name is held by a connected consumer: waits for the name to be released
     * ({@link NameHandover}, at most until {@code deadlineNanos}), then runs {@code joinAgain} on the broker's
     * scheduler; or fails with {@code busy}.
     */
    CompletableFuture<Void> whenNameReleased(RetainedCursors.NameBusyException busy, ConsumerConnection joining,
                                             long deadlineNanos,
                                             java.util.function.Supplier<CompletableFuture<Void>> joinAgain) {
        return NameHandover.await(engine.name(), busy, joining, deadlineNanos, busyNameWaitMs(),
                engine.nameReleases(), service.scheduler(), service.scheduler(), joinAgain);
    }

    /** How many subscribes wait for the consumer name {@code name}, held by a connected consumer (for tests). */
    public int subscribesWaitingForName(String name) {
        return engine.subscribesWaitingFor(name);
    }

    /** How long a subscribe whose consumer name is held waits for it ({@code broadcastBusyNameWaitMs}). */
    long busyNameWaitMs() {
        return service.config().busyNameWaitMs();
    }

    @Override
    public void addConsumer(Consumer consumer) throws BrokerServiceException {
        // Consumers come in through BroadcastSubscription.addConsumer, which knows how they asked to join.
        throw new ServerMetadataException("Broadcast consumers join through their subscription");
    }

    @Override
    public void removeConsumer(Consumer consumer) throws BrokerServiceException {
        BroadcastConsumer bc = members.remove(consumer);
        if (bc == null) {
            throw new ServerMetadataException("Consumer was not connected");
        }
        // Before stock adds the consumer's counters to the subscription's (right after this returns).
        stockStats.publishLast(consumer, bc);
        bc.cnx.forgetBroadcastConsumer(consumer.consumerId(), bc);
        engine.leave(bc);
        completeDisconnectIfEmpty();
    }

    /** Stock code removed a consumer and found none left (see {@link SubscriptionEngine#waitingCursorDropped}). */
    void lastConsumerRemoved() {
        engine.waitingCursorDropped();
    }

    private synchronized void completeDisconnectIfEmpty() {
        if (disconnectFuture != null && members.isEmpty()) {
            disconnectFuture.complete(null);
        }
    }

    // ----- flow, redelivery -----

    @Override
    public void consumerFlow(Consumer consumer, int additionalNumberOfMessages) {
        BroadcastConsumer bc = members.get(consumer);
        if (bc != null) {
            bc.flow(additionalNumberOfMessages);
        }
    }

    @Override
    public void redeliverUnacknowledgedMessages(Consumer consumer, long consumerEpoch) {
        BroadcastConsumer bc = members.get(consumer);
        if (bc != null) {
            if (consumerEpoch > consumer.getConsumerEpoch()) {
                consumer.setConsumerEpoch(consumerEpoch);
            }
            engine.redeliver(bc, consumerEpoch);
        }
    }

    @Override
    public void redeliverUnacknowledgedMessages(Consumer consumer, List<PositionImpl> positions) {
        // A virtual cursor rewinds as a whole: everything not acknowledged is sent again, in order.
        redeliverUnacknowledgedMessages(consumer, consumer.getConsumerEpoch());
    }

    // ----- reset (called by BroadcastSubscription around the stock reset-cursor) -----

    void beginReset() {
        engine.beginReset();
    }

    CompletableFuture<Void> finishReset(CompletableFuture<Void> stockReset) {
        return engine.finishReset(stockReset);
    }

    /** See {@link PeriodicSync#runBeforeSkip}; dispatch thread ({@link #runInDispatchOrder}). */
    void syncBeforeSkip() {
        engine.syncBeforeSkip();
    }

    @Override
    public void cursorIsReset() {
        // An operator moved the whole subscription (reset-cursor): everyone starts again from the new position.
        engine.cursorReset();
    }

    /**
     * Copies every consumer's delivery counters into its stock stats and adds up their totals for the stock metrics
     * ({@link StockConsumerStats}). It runs on the broker's scheduler, not on the
     * dispatch thread: at 100,000 consumers one pass touches a few hundred thousand counters spread over the heap
     * (tens of milliseconds), which the fan-out must not wait for.
     */
    private void publishStats() {
        try {
            stockStats.publish(members);
        } catch (RuntimeException e) {
            // A periodic task that throws is never run again: log and keep the schedule.
            log.warn("{} Publishing consumer stats failed: {}", engine.name(), e.toString());
        }
    }

    // ----- Dispatcher: lifecycle -----

    @Override
    public boolean isConsumerConnected() {
        return !members.isEmpty();
    }

    /** The consumers; an empty list on a thread that builds the stock metrics' totals ({@link StockConsumerStats}). */
    @Override
    public List<Consumer> getConsumers() {
        return StockConsumerStats.hidingConsumerList() ? Collections.emptyList() : consumerList;
    }

    /** Connected consumers now. */
    int consumerCount() {
        return members.size();
    }

    StockConsumerStats stockStats() {
        return stockStats;
    }

    /**
     * A consumer may delete the subscription only when it is the only one attached and no other consumer's position
     * is retained for a reconnect: unsubscribing would otherwise drop positions that hold other consumers' messages
     * (an operator deletes such a subscription with {@code pulsar-admin topics unsubscribe}).
     */
    @Override
    public boolean canUnsubscribe(Consumer consumer) {
        return members.size() == 1 && members.containsKey(consumer) && engine.retainedCount() == 0;
    }

    /**
     * Saves every consumer's position, then disconnects them: the future completes when both are done, so a topic
     * unload that waits for its clients releases the topic only after its positions are saved (a bundle unload or a
     * broker shut-down closes topics without waiting; the bundle is released after its topics are closed). A save that
     * fails or takes longer than {@value #CLOSE_SAVE_TIMEOUT_SECONDS} s is logged and does not hold the close
     * (consumers then resume at their last saved positions).
     */
    @Override
    public CompletableFuture<Void> close() {
        CompletableFuture<Void> closing;
        try {
            closing = engine.close();
        } catch (RuntimeException e) { // thrown inside stock's synchronized disconnect, it would hang the unload
            closing = CompletableFuture.failedFuture(e);
        }
        CompletableFuture<Void> saved = closing.orTimeout(CLOSE_SAVE_TIMEOUT_SECONDS, TimeUnit.SECONDS)
                .exceptionally(e -> {
                    log.warn("{} Saving consumer positions on close failed: {}", engine.name(), e.toString());
                    return null;
                });
        stopPeriodicTasks();
        return CompletableFuture.allOf(saved, disconnectAllConsumers(false).thenRun(engine::closeFanOut));
    }

    private synchronized void stopPeriodicTasks() {
        periodic.stop();
        if (receiveToPersisted != null) {
            service.publishLatencies().unregister(topicName);
            receiveToPersisted = null;
        }
    }

    /** No more saves: the topic is no longer this broker's ({@link BroadcastSubscription#closeIfOrphaned}). */
    void abandonPositions() {
        engine.abandonPositions();
    }

    /** The subscription is being deleted (true) or its deletion failed (false): no saves meanwhile. */
    void deleting(boolean deleting) {
        engine.deleting(deleting);
    }

    /** Removes the saved positions of a deleted subscription. */
    CompletableFuture<Void> deleteSavedPositions() {
        return engine.deleteSavedPositions();
    }

    @Override
    public boolean isClosed() {
        return engine.isClosed();
    }

    @Override
    public CompletableFuture<Void> disconnectActiveConsumers(boolean isResetCursor) {
        return disconnectAllConsumers(isResetCursor);
    }

    @Override
    public synchronized CompletableFuture<Void> disconnectAllConsumers(boolean isResetCursor) {
        if (disconnectFuture == null || disconnectFuture.isDone()) {
            disconnectFuture = new CompletableFuture<>();
        }
        CompletableFuture<Void> future = disconnectFuture;
        if (members.isEmpty()) {
            future.complete(null);
        } else {
            new ArrayList<>(members.keySet()).forEach(c -> c.disconnect(isResetCursor));
        }
        return future;
    }

    @Override
    public synchronized void resetCloseFuture() {
        disconnectFuture = null;
    }

    @Override
    public void reset() {
        resetCloseFuture();
        engine.reopen();
        startPeriodicTasks();
    }

    @Override
    public SubType getType() {
        return SubType.Failover;
    }

    @Override
    public void addUnAckedMessages(int unAckMessages) {
        // Broadcast consumers have no unacked-message limit: each one's own permits bound what it is sent.
    }

    @Override
    public RedeliveryTracker getRedeliveryTracker() {
        return RedeliveryTrackerDisabled.REDELIVERY_TRACKER_DISABLED;
    }

    // ----- observability -----

    /** The broadcast consumer state of {@code consumer}, or null. */
    public BroadcastConsumer member(Consumer consumer) {
        return members.get(consumer);
    }

    /** The topic's ledgers now, to count each consumer's lag in entries ({@link EntryOffsets#lag}). */
    public EntryOffsets entryOffsets() {
        return engine.entryOffsets();
    }

    /** The subscription as metrics see it now; any thread, a few milliseconds for 100,000 consumers. */
    public SubscriptionSnapshot snapshot() {
        return engine.snapshot(members.values());
    }

    /** The topic's "broker receive to persisted" stage, or an empty histogram once the dispatcher is closed. */
    public synchronized LatencyHistogram receiveToPersisted() {
        return receiveToPersisted != null ? receiveToPersisted : new LatencyHistogram();
    }

    /** Positions retained for consumers that are not connected. */
    public int parkedCount() {
        return engine.retainedCount();
    }

    /** What the dispatcher counts. */
    public DispatchCounters counters() {
        return engine.counters();
    }

    /**
     * Runs {@code task} on this subscription's dispatch thread, after the dispatch work already queued and before any
     * queued later: for tools and tests that must observe the engine between two of its tasks, or hold it there.
     */
    public void runInDispatchOrder(Runnable task) {
        engine.post(task);
    }

    /** Index of the executor thread this subscription's dispatch work is ordered on. */
    public int dispatchThreadIndex() {
        return service.executor().threadIndex(key);
    }

    /** Name of the thread that ran this subscription's periodic dispatch work, or null before the first run. */
    public String dispatchThreadName() {
        return engine.counters().dispatchThreadName();
    }
}
