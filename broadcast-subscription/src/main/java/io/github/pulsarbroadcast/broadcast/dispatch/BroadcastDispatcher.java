package io.github.pulsarbroadcast.broadcast.dispatch;

import io.github.pulsarbroadcast.broadcast.BroadcastService;
import io.github.pulsarbroadcast.broadcast.cnx.BroadcastServerCnx;
import io.github.pulsarbroadcast.broadcast.cursor.AckResult;
import io.github.pulsarbroadcast.broadcast.cursor.PositionSequence;
import io.github.pulsarbroadcast.broadcast.cursor.VirtualCursor;
import io.github.pulsarbroadcast.executor.SubscriptionKey;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.mledger.ManagedCursor;
import org.apache.bookkeeper.mledger.impl.ManagedLedgerImpl;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.broker.service.BrokerServiceException;
import org.apache.pulsar.broker.service.BrokerServiceException.ConsumerBusyException;
import org.apache.pulsar.broker.service.BrokerServiceException.ServerMetadataException;
import org.apache.pulsar.broker.service.BrokerServiceException.SubscriptionFencedException;
import org.apache.pulsar.broker.service.Consumer;
import org.apache.pulsar.broker.service.Dispatcher;
import org.apache.pulsar.broker.service.RedeliveryTracker;
import org.apache.pulsar.broker.service.RedeliveryTrackerDisabled;
import org.apache.pulsar.broker.service.persistent.PersistentTopic;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.apache.pulsar.common.api.proto.CommandSubscribe.SubType;
import org.apache.pulsar.common.naming.TopicName;
import org.apache.pulsar.common.policies.data.stats.ConsumerStatsImpl;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one dispatcher of a broadcast subscription. Stock Pulsar calls it through the {@link Dispatcher} interface
 * (add and remove consumers, flow, redelivery, close); the plugin's connection handler calls it for flows and acks
 * of broadcast consumers directly.
 *
 * <p>Threading: dispatch work is posted to the subscription's thread of the subscription-keyed executor and run
 * there in order ({@link FanOut} is confined to it). Acknowledgements run on random executor threads and touch only
 * the consumer's {@link VirtualCursor}, which is thread-safe. Membership ({@link #members}, {@link #byName},
 * {@link #parked}) is in concurrent maps because stock Pulsar adds and removes consumers on its own threads. Counters
 * are single-writer (the dispatch thread) and volatile for readers. Consumer stats are published by a task of the
 * broker's scheduler ({@link #publishStats}), which only reads the membership map.
 */
public final class BroadcastDispatcher implements Dispatcher {

    private static final Logger log = LoggerFactory.getLogger(BroadcastDispatcher.class);

    private final BroadcastSubscription subscription;
    private final PersistentTopic topic;
    private final ManagedCursor cursor;
    private final BroadcastService service;
    private final SubscriptionKey key;
    private final PositionSequence sequence;
    private final String name;
    private final int partitionIndex;
    private final FanOut fanOut;

    private final Map<Consumer, BroadcastConsumer> members = new ConcurrentHashMap<>();
    private final Map<String, BroadcastConsumer> byName = new ConcurrentHashMap<>();
    private final Map<String, ParkedCursor> parked = new ConcurrentHashMap<>();
    private final ConsumerListView consumerList = new ConsumerListView(members.keySet());

    /** Until when (System.nanoTime) joining consumers start at the mark-delete position; volatile, any writer. */
    private volatile long recoveryUntilNanos;
    private volatile boolean closed;
    /** Completed when the last consumer leaves after a disconnect request; guarded by {@code this}. */
    private CompletableFuture<Void> disconnectFuture;
    private volatile ScheduledFuture<?> periodicTask;
    private volatile ScheduledFuture<?> statsTask;

    private volatile long tailEntriesRead;
    private volatile long catchUpEntriesRead;
    private volatile long sendTasks;
    private volatile long consumersSkippedForward;
    /** Written by the ack threads. */
    private final java.util.concurrent.atomic.LongAdder rejectedAcks = new java.util.concurrent.atomic.LongAdder();
    /** The thread that last ran this subscription's periodic dispatch work; single writer (that thread). */
    private volatile String dispatchThreadName;

    BroadcastDispatcher(BroadcastSubscription subscription, PersistentTopic topic, ManagedCursor cursor,
                        BroadcastService service, boolean recovering) {
        this.subscription = subscription;
        this.topic = topic;
        this.cursor = cursor;
        this.service = service;
        this.key = SubscriptionKey.of(topic.getName(), subscription.getName());
        ManagedLedgerImpl ledger = (ManagedLedgerImpl) topic.getManagedLedger();
        this.sequence = ledger::getNextValidPosition;
        this.name = "[" + topic.getName() + "][" + subscription.getName() + "]";
        this.partitionIndex = TopicName.getPartitionIndex(topic.getName());
        this.fanOut = new FanOut(this, cursor, sequence, service.config(), name);
        if (recovering) {
            startRecoveryWindow();
        }
        startPeriodicTasks();
    }

    /** Starts the cursor sync (posted to the dispatch thread) and the stats publication (on the scheduler). */
    private synchronized void startPeriodicTasks() {
        if (periodicTask == null || periodicTask.isCancelled()) {
            long interval = service.config().markDeleteIntervalMs();
            periodicTask = service.scheduler().scheduleAtFixedRate(() -> post(this::syncCursor), interval, interval,
                    TimeUnit.MILLISECONDS);
        }
        if (statsTask == null || statsTask.isCancelled()) {
            long interval = service.config().statsIntervalMs();
            statsTask = service.scheduler().scheduleWithFixedDelay(this::publishStats, interval, interval,
                    TimeUnit.MILLISECONDS);
        }
    }

    // ----- plumbing -----

    void post(Runnable task) {
        service.executor().executeOrdered(key, task);
    }

    void schedule(Runnable task, long delayMs) {
        service.scheduler().schedule(() -> post(task), delayMs, TimeUnit.MILLISECONDS);
    }

    String topicName() {
        return topic.getName();
    }

    int partitionIndex() {
        return partitionIndex;
    }

    int memberCount() {
        return members.size();
    }

    /** The executor key this subscription's dispatch work is ordered on. */
    public SubscriptionKey key() {
        return key;
    }

    private void startRecoveryWindow() {
        recoveryUntilNanos = System.nanoTime() + TimeUnit.SECONDS.toNanos(service.config().reconnectGraceSeconds());
    }

    // ----- joining and leaving -----

    /**
     * Attaches a consumer: resumes its parked virtual cursor if it reconnects by name within the grace period,
     * otherwise starts it at the tail ({@code Latest}) or at the subscription's mark-delete position
     * ({@code Earliest}, or any join during the recovery window after the subscription was loaded).
     */
    void join(Consumer consumer, BroadcastServerCnx cnx, InitialPosition initialPosition)
            throws BrokerServiceException {
        if (closed) {
            throw new SubscriptionFencedException("Subscription " + subscription.getName() + " is closing");
        }
        if (subscription.isMaxConsumersReached(members.size())) {
            throw new ConsumerBusyException("Subscription reached max consumers limit");
        }
        String consumerName = consumer.consumerName();
        boolean recovering = System.nanoTime() < recoveryUntilNanos;
        ParkedCursor resumed = consumerName.isEmpty() ? null : parked.remove(consumerName);
        VirtualCursor vc = resumed != null ? resumed.cursor : startCursor(initialPosition);
        BroadcastConsumer bc = new BroadcastConsumer(this, consumer, cnx, vc, cnx.receivesBrokerEntryMetadata());
        if (!consumerName.isEmpty() && byName.putIfAbsent(consumerName, bc) != null) {
            if (resumed != null) {
                parked.put(consumerName, resumed);
            }
            throw new ConsumerBusyException("Consumer name '" + consumerName + "' is already connected to broadcast"
                    + " subscription '" + subscription.getName() + "': consumer names must be unique within it");
        }
        members.put(consumer, bc);
        cnx.registerBroadcastConsumer(consumer.consumerId(), bc);
        boolean resume = resumed != null;
        post(() -> fanOut.join(bc, resume));
        if (log.isDebugEnabled()) {
            log.debug("{} Consumer {} joined ({}) at {}", name, consumerName,
                    resume ? "resumed" : recovering ? "recovery window" : initialPosition, vc.acknowledged());
        }
    }

    private VirtualCursor startCursor(InitialPosition initialPosition) {
        PositionImpl start = initialPosition == InitialPosition.Earliest || System.nanoTime() < recoveryUntilNanos
                ? (PositionImpl) cursor.getMarkDeletedPosition()
                : (PositionImpl) topic.getManagedLedger().getLastConfirmedEntry();
        return new VirtualCursor(start, sequence.next(start));
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
        String consumerName = consumer.consumerName();
        if (!consumerName.isEmpty() && byName.remove(consumerName, bc) && !closed
                && service.config().reconnectGraceSeconds() > 0) {
            // Parked before the name is free again, so a quick reconnect always finds it.
            parked.put(consumerName, new ParkedCursor(bc.cursor, System.nanoTime()
                    + TimeUnit.SECONDS.toNanos(service.config().reconnectGraceSeconds())));
        }
        bc.cnx.forgetBroadcastConsumer(consumer.consumerId(), bc);
        post(() -> fanOut.remove(bc));
        completeDisconnectIfEmpty();
    }

    private synchronized void completeDisconnectIfEmpty() {
        if (disconnectFuture != null && members.isEmpty()) {
            disconnectFuture.complete(null);
        }
    }

    // ----- flow, redelivery, acknowledgements -----

    @Override
    public void consumerFlow(Consumer consumer, int additionalNumberOfMessages) {
        BroadcastConsumer bc = members.get(consumer);
        if (bc != null) {
            flow(bc, additionalNumberOfMessages);
        }
    }

    /** Adds permits to a broadcast consumer (from its connection's flow command). */
    public void flow(BroadcastConsumer bc, int permits) {
        if (permits > 0) {
            post(() -> fanOut.flow(bc, permits));
        }
    }

    @Override
    public void redeliverUnacknowledgedMessages(Consumer consumer, long consumerEpoch) {
        BroadcastConsumer bc = members.get(consumer);
        if (bc != null) {
            post(() -> fanOut.redeliver(bc, consumerEpoch));
        }
    }

    @Override
    public void redeliverUnacknowledgedMessages(Consumer consumer, List<PositionImpl> positions) {
        // A virtual cursor rewinds as a whole: everything not acknowledged is sent again, in order.
        redeliverUnacknowledgedMessages(consumer, consumer.getConsumerEpoch());
    }

    /**
     * Applies one acknowledgement of {@code bc}; runs on a random executor thread.
     *
     * @return {@link AckResult#NOT_SENT} if the position was never sent to this consumer
     */
    public AckResult acknowledge(BroadcastConsumer bc, long ledgerId, long entryId, boolean cumulative) {
        PositionImpl position = PositionImpl.get(ledgerId, entryId);
        bc.lastAckedMillis = System.currentTimeMillis();
        AckResult result = cumulative ? bc.cursor.acknowledgeCumulative(position)
                : bc.cursor.acknowledgeIndividual(position, sequence);
        if (result == AckResult.NOT_SENT) {
            rejectedAcks.increment();
            if (log.isDebugEnabled()) {
                log.debug("{} Rejected ack of {} from {}: never sent to it", name, position, bc);
            }
        }
        return result;
    }

    // ----- the periodic cursor sync (dispatch thread) -----

    /**
     * Moves the durable mark-delete position up to the lowest acknowledged position of all consumers (connected or
     * parked), so storage keeps every message until every consumer has it; moves forward any consumer that the
     * cursor was moved past (backlog-quota eviction, TTL, clear-backlog); refreshes rates; trims the window.
     */
    private void syncCursor() {
        dispatchThreadName = Thread.currentThread().getName();
        if (closed) {
            return;
        }
        PositionImpl markDeleted = (PositionImpl) cursor.getMarkDeletedPosition();
        PositionImpl lowestAck = null;
        PositionImpl lowestNext = null;
        for (BroadcastConsumer bc : members.values()) {
            if (bc.cursor.skipTo(markDeleted)) {
                consumersSkippedForward++;
                fanOut.skipForward(bc, sequence.next(markDeleted));
            }
            lowestAck = min(lowestAck, bc.cursor.acknowledged());
            lowestNext = min(lowestNext, bc.cursor.next());
        }
        long now = System.nanoTime();
        parked.values().removeIf(p -> p.expiresAtNanos < now);
        for (ParkedCursor p : parked.values()) {
            p.cursor.skipTo(markDeleted);
            lowestAck = min(lowestAck, p.cursor.acknowledged());
        }
        // During the recovery window after the subscription was loaded, consumers that were attached before the move
        // may still be on their way back, and they resume at the mark-delete position: it must not move until then.
        boolean recovering = System.nanoTime() < recoveryUntilNanos;
        if (!recovering && lowestAck != null && lowestAck.compareTo(markDeleted) > 0) {
            subscription.markDeleteUpTo(lowestAck);
        }
        if (lowestNext != null) {
            fanOut.trimWindow(lowestNext);
        }
    }

    /**
     * Copies every consumer's delivery counters into its stock stats. It runs on the broker's scheduler, not on the
     * dispatch thread: at 100,000 consumers one pass touches a few hundred thousand counters spread over the heap
     * (tens of milliseconds), which the fan-out must not wait for, and it runs less often than the cursor sync
     * because only stats readers need it.
     */
    private void publishStats() {
        try {
            ConsumerStatsImpl scratch = new ConsumerStatsImpl();
            for (BroadcastConsumer bc : members.values()) {
                bc.publishStats(scratch);
            }
        } catch (RuntimeException e) {
            // A periodic task that throws is never run again: log and keep the schedule.
            log.warn("{} Publishing consumer stats failed: {}", name, e.toString());
        }
    }

    private static PositionImpl min(PositionImpl a, PositionImpl b) {
        return a == null || b.compareTo(a) < 0 ? b : a;
    }

    // ----- Dispatcher: lifecycle -----

    @Override
    public boolean isConsumerConnected() {
        return !members.isEmpty();
    }

    @Override
    public List<Consumer> getConsumers() {
        return consumerList;
    }

    @Override
    public boolean canUnsubscribe(Consumer consumer) {
        return members.size() == 1 && members.containsKey(consumer);
    }

    @Override
    public CompletableFuture<Void> close() {
        closed = true;
        for (ScheduledFuture<?> task : new ScheduledFuture<?>[] {periodicTask, statsTask}) {
            if (task != null) {
                task.cancel(false);
            }
        }
        parked.clear();
        return disconnectAllConsumers(false).thenRun(() -> post(fanOut::close));
    }

    @Override
    public boolean isClosed() {
        return closed;
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
        closed = false;
        post(fanOut::reopen);
        startPeriodicTasks();
    }

    @Override
    public void cursorIsReset() {
        // An operator moved the whole subscription (reset-cursor): everyone starts again from the new position.
        parked.clear();
        startRecoveryWindow();
        post(fanOut::release);
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

    /** Consumers whose virtual cursors are kept for a reconnect. */
    public int parkedCount() {
        return parked.size();
    }

    /** Entries read from storage at the tail (each once, whatever the number of consumers). */
    public long tailEntriesRead() {
        return tailEntriesRead;
    }

    /** Entries read from storage (through the entry cache) for consumers behind the window. */
    public long catchUpEntriesRead() {
        return catchUpEntriesRead;
    }

    /** Event-loop tasks handed to connections: one per connection per dispatch pass. */
    public long sendTasks() {
        return sendTasks;
    }

    /** Consumers moved forward because the subscription's cursor was moved past them. */
    public long consumersSkippedForward() {
        return consumersSkippedForward;
    }

    /** Acks rejected because they named positions never sent to the consumer. */
    public long rejectedAcks() {
        return rejectedAcks.sum();
    }

    /** Index of the executor thread this subscription's dispatch work is ordered on. */
    public int dispatchThreadIndex() {
        return service.executor().threadIndex(key);
    }

    /** Name of the thread that ran this subscription's dispatch work (seen by its periodic task), or null before
     *  the first run. */
    public String dispatchThreadName() {
        return dispatchThreadName;
    }

    void countTailRead(int entries) {
        tailEntriesRead += entries;
    }

    void countCatchUpRead(int entries) {
        catchUpEntriesRead += entries;
    }

    void countSendTask() {
        sendTasks++;
    }

    /** A disconnected consumer's virtual cursor, kept for a reconnect until {@link #expiresAtNanos}. */
    private static final class ParkedCursor {
        final VirtualCursor cursor;
        final long expiresAtNanos;

        ParkedCursor(VirtualCursor cursor, long expiresAtNanos) {
            this.cursor = cursor;
            this.expiresAtNanos = expiresAtNanos;
        }
    }
}
