package io.github.pulsarbroadcast.broadcast.dispatch;

import io.github.pulsarbroadcast.broadcast.BroadcastMode;
import io.github.pulsarbroadcast.broadcast.BroadcastService;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.bookkeeper.mledger.ManagedCursor;
import org.apache.bookkeeper.mledger.Position;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.broker.service.BrokerServiceException;
import org.apache.pulsar.broker.service.BrokerServiceException.NotAllowedException;
import org.apache.pulsar.broker.service.Consumer;
import org.apache.pulsar.broker.service.Subscription;
import org.apache.pulsar.broker.service.Topic;
import org.apache.pulsar.broker.service.TransportCnx;
import org.apache.pulsar.broker.service.persistent.PersistentSubscription;
import org.apache.pulsar.broker.service.persistent.PersistentTopic;
import org.apache.pulsar.common.api.proto.CommandAck.AckType;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.apache.pulsar.common.naming.TopicName;
import org.apache.pulsar.common.policies.data.stats.SubscriptionStatsImpl;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A durable subscription whose consumers each get every message: a stock {@link PersistentSubscription} (one
 * managed cursor, stock stats, admin operations, retention) whose dispatcher is a {@link BroadcastDispatcher} that
 * stock code can never replace, because {@link #addConsumer} is ours.
 *
 * <p>The subscription's cursor carries the subscription property {@value BroadcastMode#KEY}={@value
 * BroadcastMode#BROADCAST}; a broker without the plugin therefore loads it as a plain subscription, intact.
 *
 * <p>As a {@link Function} of JDK types it answers the consumer listing ({@link ConsumerListingSource}): query
 * parameters in, the response as maps and lists out. That is the whole contract with the listing servlet, which is
 * loaded by a class loader of its own and so cannot name this class.
 *
 * <p>Threading: as {@link PersistentSubscription} (its methods are called from stock Pulsar threads; consumer changes
 * are serialised on this object's monitor, as stock does). {@link #apply} runs on the asking web thread.
 */
public final class BroadcastSubscription extends PersistentSubscription
        implements Function<Map<String, String>, Map<String, Object>> {

    private static final Logger log = LoggerFactory.getLogger(BroadcastSubscription.class);

    private final BroadcastDispatcher broadcastDispatcher;
    private final ConsumerListingSource listing = new ConsumerListingSource(this);
    /** Whether {@link #closeIfOrphaned} logged (once per subscription); volatile (the scheduler and an installer). */
    private volatile boolean orphanLogged;
    /** Whether {@link #acknowledgeMessage} logged its WARN (once per subscription); volatile (any ack thread). */
    private volatile boolean ackRefusalLogged;

    BroadcastSubscription(PersistentTopic topic, String name, ManagedCursor cursor, Map<String, String> properties,
                          BroadcastService service, SubscriptionStart start) {
        super(topic, name, cursor, false, properties);
        SubscriptionStorage storage = new ManagedCursorStorage(cursor, topic, this,
                service.pulsar().getConfiguration().isAutoSkipNonRecoverableData());
        this.broadcastDispatcher = new BroadcastDispatcher(this, storage, topic.getName(),
                TopicName.getPartitionIndex(topic.getName()), service, start);
        this.dispatcher = broadcastDispatcher;
    }

    /** Whether a subscription (of any class) is marked broadcast in its stored properties. */
    public static boolean isMarkedBroadcast(PersistentSubscription subscription) {
        return BroadcastMode.BROADCAST.equals(subscription.getSubscriptionProperties().get(BroadcastMode.KEY));
    }

    /**
     * Whether {@code subscription} is a plain stock one marked broadcast: what the broker makes for a broadcast
     * subscription when it loads the topic, until the plugin serves it (a broadcast consumer or an admin call).
     */
    public static boolean isMarkedButNotServed(Subscription subscription) {
        return subscription instanceof PersistentSubscription && !(subscription instanceof BroadcastSubscription)
                && isMarkedBroadcast((PersistentSubscription) subscription);
    }

    @Override
    public CompletableFuture<Void> addConsumer(Consumer consumer) {
        TransportCnx cnx = consumer.cnx();
        InitialPosition join = cnx instanceof ConsumerConnection
                ? ((ConsumerConnection) cnx).takeBroadcastJoin(consumer.consumerId()) : null;
        if (join == null) {
            return CompletableFuture.failedFuture(new NotAllowedException("Subscription '" + getName() + "' on "
                    + topicName + " is a broadcast subscription: subscribe with subscription type Failover and the"
                    + " subscription property (or consumer property) " + BroadcastMode.KEY + "="
                    + BroadcastMode.BROADCAST));
        }
        synchronized (this) {
            cursor.updateLastActive();
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(broadcastDispatcher.busyNameWaitMs());
        return join(consumer, (ConsumerConnection) cnx, join, deadline);
    }

    /**
     * Joins; when the consumer name is held, waits for it until {@code deadlineNanos} ({@link NameHandover}) and joins
     * again, waiting again within what is left if another subscribe took the name first. A subscribe whose connection
     * closed meanwhile does not join (stock code would only remove it again, and it could take the name from a live
     * subscribe waiting for it too).
     */
    private synchronized CompletableFuture<Void> join(Consumer consumer, ConsumerConnection cnx, InitialPosition join,
                                                      long deadlineNanos) {
        if (!consumer.cnx().isActive()) {
            return CompletableFuture.failedFuture(new BrokerServiceException("Connection closed while the consumer"
                    + " waited for its name"));
        }
        try {
            broadcastDispatcher.join(consumer, cnx, join);
            return CompletableFuture.completedFuture(null);
        } catch (RetainedCursors.NameBusyException busy) {
            return broadcastDispatcher.whenNameReleased(busy, cnx, deadlineNanos,
                    () -> join(consumer, cnx, join, deadlineNanos));
        } catch (BrokerServiceException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Stock removal, then: when stock found no consumer left it took the cursor off the ledger's waiting list, so the
     * dispatcher arms its tail read again (a consumer may have joined meanwhile). Same monitor as {@link #addConsumer}.
     */
    @Override
    public synchronized void removeConsumer(Consumer consumer, boolean isResetCursor) throws BrokerServiceException {
        super.removeConsumer(consumer, isResetCursor);
        if (!broadcastDispatcher.isConsumerConnected()) {
            broadcastDispatcher.lastConsumerRemoved();
        }
    }

    /**
     * Stock reset-cursor (it fences the subscription, disconnects every consumer and resets the managed cursor), with
     * the dispatcher told before and after: meanwhile it refuses joins, retains no position and never moves the
     * mark-delete position, so no consumer resumes a position from before the reset. It answers once the positions it
     * restarted are saved, or with an error when they could not be ({@link ResetGate#finish}).
     */
    @Override
    public CompletableFuture<Void> resetCursor(Position position) {
        broadcastDispatcher.beginReset();
        return broadcastDispatcher.finishReset(stockReset(() -> super.resetCursor(position)));
    }

    /** As {@link #resetCursor(Position)}, to the first message published at or after {@code timestamp}. */
    @Override
    public CompletableFuture<Void> resetCursor(long timestamp) {
        broadcastDispatcher.beginReset();
        return broadcastDispatcher.finishReset(stockReset(() -> super.resetCursor(timestamp)));
    }

    /** Stock's reset; one that throws instead of failing its future still ends the reset ({@link ResetGate#finish}). */
    private static CompletableFuture<Void> stockReset(Supplier<CompletableFuture<Void>> reset) {
        try {
            return reset.get();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Stock's skip, counted from the consumers' lowest acknowledged position rather than from a mark-delete position
     * that lags it ({@link PeriodicSync#runBeforeSkip}, on the dispatch thread; at most 10 s are waited for it).
     */
    @Override
    public CompletableFuture<Void> skipMessages(int numMessagesToSkip) {
        CompletableFuture<Void> synced = new CompletableFuture<>();
        try {
            broadcastDispatcher.runInDispatchOrder(() -> {
                try {
                    broadcastDispatcher.syncBeforeSkip();
                } finally {
                    synced.complete(null);
                }
            });
        } catch (RejectedExecutionException closing) {
            synced.complete(null); // the broker is closing: stock's skip as it is
        }
        return synced.orTimeout(10, TimeUnit.SECONDS).exceptionally(e -> null)
                .thenCompose(v -> super.skipMessages(numMessagesToSkip));
    }

    /**
     * Stock replaces every property ({@code pulsar-admin topics update-subscription-properties}); the broadcast key
     * is kept, as without it the next load of the topic would refuse every broadcast consumer and let stock ones in
     * (regression, twenty-sixth session's review).
     */
    @Override
    public CompletableFuture<Void> updateSubscriptionProperties(Map<String, String> properties) {
        Map<String, String> kept = properties == null ? new HashMap<>() : new HashMap<>(properties);
        kept.put(BroadcastMode.KEY, BroadcastMode.BROADCAST);
        return super.updateSubscriptionProperties(kept);
    }

    /** Stock deletion (unsubscribe, admin delete, expiry), then the saved consumer positions are removed. */
    @Override
    public CompletableFuture<Void> delete() {
        return deleteThenPositions(super::delete);
    }

    /** As {@link #delete()}, disconnecting consumers first. */
    @Override
    public CompletableFuture<Void> deleteForcefully() {
        return deleteThenPositions(super::deleteForcefully);
    }

    private CompletableFuture<Void> deleteThenPositions(java.util.function.Supplier<CompletableFuture<Void>> stock) {
        broadcastDispatcher.deleting(true);
        return stock.get().handle((v, e) -> {
            if (e != null) {
                broadcastDispatcher.deleting(false);
                return CompletableFuture.<Void>failedFuture(e);
            }
            return broadcastDispatcher.deleteSavedPositions();
        }).thenCompose(f -> f);
    }

    /**
     * Closes this subscription when the topic has left this broker without closing it: the broker's topics no longer
     * map the topic's name to this topic object (it was closed and dropped, or loaded anew). A live topic is in that
     * map from before any subscription is installed until its close has at least started closing every subscription it
     * found (which cancels this check's periodic task); an installation that raced the close (a subscribe, or the
     * admin-call preparation) put this one into the map after the close had looked. It closes as the topic's close
     * would have (consumers that attached meanwhile are disconnected and reconnect to the topic's owner), except that
     * it saves nothing: the topic is no longer this broker's, and a save could take the positions over from their new
     * owner (consumers resume at the positions saved before: duplicates, never loss). Regression (twenty-ninth
     * session): such a subscription kept its positions, its periodic scan and its stats task for as long as the broker
     * ran. Any thread; never throws.
     *
     * @return whether the subscription is closed or being closed
     */
    boolean closeIfOrphaned() {
        try {
            if (broadcastDispatcher.isClosed()) {
                return true; // closed meanwhile (a tick that ran while the topic's own close cancelled it)
            }
            if (servedHere(topic)) {
                return false;
            }
            if (!orphanLogged) {
                orphanLogged = true;
                log.warn("[{}][{}] The topic is no longer served by this broker but the subscription was never"
                        + " closed (its installation raced the topic's close): closing it without saving",
                        topicName, getName());
            }
            broadcastDispatcher.abandonPositions();
            disconnect().exceptionally(e -> {
                log.warn("[{}][{}] Closing the subscription of a topic this broker no longer serves failed: {}",
                        topicName, getName(), e.toString());
                return null;
            });
            return true;
        } catch (RuntimeException e) { // the scheduler drops a periodic task that throws
            log.warn("[{}][{}] Could not tell whether the topic is still served here: {}", topicName, getName(),
                    e.toString());
            return false;
        }
    }

    /** Whether the broker's topics map {@code topic}'s name to this very object (it has not left this broker). */
    static boolean servedHere(PersistentTopic topic) {
        Optional<Topic> served = topic.getBrokerService().getTopicReference(topic.getName());
        return served.isPresent() && served.get() == topic;
    }

    /** Moves the durable mark-delete position to {@code position} through the stock acknowledgement path. */
    void markDeleteUpTo(PositionImpl position) {
        super.acknowledgeMessage(Collections.<Position>singletonList(position), AckType.Cumulative,
                Collections.emptyMap());
    }

    /**
     * Refused: the shared cursor moves only with the lowest position of all consumers ({@link #markDeleteUpTo}).
     * Stock reaches this with an ack of a consumer the connection's routing does not know (two attaches of one id
     * overlapping, a review of the forty-sixth session): applied, it moved the cursor past what the other consumers
     * had not received. The ack is dropped; that consumer gets those messages again on a redelivery or reconnect.
     */
    @Override
    public void acknowledgeMessage(List<Position> positions, AckType ackType, Map<String, Long> properties) {
        if (!ackRefusalLogged) {
            ackRefusalLogged = true;
            log.warn("[{}][{}] A stock acknowledgement reached the broadcast subscription; dropped (it would move every"
                    + " consumer). Further ones are logged at DEBUG", topicName, subName);
        } else if (log.isDebugEnabled()) {
            log.debug("[{}][{}] A stock acknowledgement dropped: {} {}", topicName, subName, ackType, positions);
        }
    }

    /** Whether {@code currentConsumers} already reaches the topic's {@code maxConsumersPerSubscription} policy. */
    boolean isMaxConsumersReached(int currentConsumers) {
        if (topic.isSystemTopic()) {
            return false;
        }
        Integer max = topic.getHierarchyTopicPolicies().getMaxConsumersPerSubscription().get();
        return max != null && max > 0 && currentConsumers >= max;
    }

    /**
     * Stock subscription stats; for stock Pulsar's metrics aggregator, with the consumers' totals in place of one
     * record per consumer ({@link StockConsumerStats}: the same figures, without a pass over 100,000 consumers on
     * every scrape). Every other caller gets every consumer.
     */
    @Override
    public SubscriptionStatsImpl getStats(Boolean getPreciseBacklog, boolean subscriptionBacklogSize,
                                          boolean getEarliestTimeInBacklog) {
        if (!StockConsumerStats.calledByStockAggregator()) {
            return super.getStats(getPreciseBacklog, subscriptionBacklogSize, getEarliestTimeInBacklog);
        }
        SubscriptionStatsImpl stats = StockConsumerStats.withoutConsumerList(
                () -> super.getStats(getPreciseBacklog, subscriptionBacklogSize, getEarliestTimeInBacklog));
        broadcastDispatcher.stockStats().applyTotals(stats, broadcastDispatcher.consumerCount());
        broadcastDispatcher.counters().stockStatsSummarized.increment();
        return stats;
    }

    /** The broadcast dispatcher (also {@link #getDispatcher()}). */
    public BroadcastDispatcher broadcastDispatcher() {
        return broadcastDispatcher;
    }

    @Override
    public List<Consumer> getConsumers() {
        return broadcastDispatcher.getConsumers();
    }

    /**
     * The consumer listing: one page of this subscription's consumers for the query {@code parameters} (see
     * {@code ListingQuery}); any thread.
     *
     * @throws IllegalArgumentException when a parameter is bad (the message names it and what is allowed)
     */
    @Override
    public Map<String, Object> apply(Map<String, String> parameters) {
        return listing.apply(parameters);
    }
}
