package io.github.pulsarbroadcast.broadcast.dispatch;

import io.github.pulsarbroadcast.broadcast.BroadcastMode;
import io.github.pulsarbroadcast.broadcast.BroadcastService;
import io.github.pulsarbroadcast.broadcast.positions.PositionNodes;
import io.github.pulsarbroadcast.broadcast.positions.PositionStore;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import org.apache.bookkeeper.mledger.impl.ManagedLedgerImpl;
import org.apache.pulsar.broker.namespace.NamespaceService;
import org.apache.pulsar.broker.service.BrokerServiceException;
import org.apache.pulsar.broker.service.BrokerServiceException.NamingException;
import org.apache.pulsar.broker.service.BrokerServiceException.NotAllowedException;
import org.apache.pulsar.broker.service.BrokerServiceException.SubscriptionBusyException;
import org.apache.pulsar.broker.service.BrokerServiceException.SubscriptionNotFoundException;
import org.apache.pulsar.broker.service.BrokerServiceException.TopicFencedException;
import org.apache.pulsar.broker.service.Dispatcher;
import org.apache.pulsar.broker.service.persistent.PersistentSubscription;
import org.apache.pulsar.broker.service.persistent.PersistentTopic;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.apache.pulsar.common.api.proto.CommandSubscribe.SubType;
import org.apache.pulsar.common.events.EventsTopicNames;
import org.apache.pulsar.common.naming.TopicName;
import org.apache.pulsar.common.util.Codec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Puts a {@link BroadcastSubscription} into a topic's live subscription map before the stock subscribe path looks
 * the subscription up, so that stock Pulsar (authorization, limits, consumer registration) does the rest and attaches
 * the consumer to our subscription.
 *
 * <ul>
 *   <li>New subscription: created through the stock {@code PersistentTopic.createSubscription} (which checks the
 *       topic's subscription limit and stores the subscription properties with the new cursor, including
 *       {@value BroadcastMode#KEY}={@value BroadcastMode#BROADCAST}), then adopted.</li>
 *   <li>Existing plain object for a broadcast cursor (the topic was just loaded: stock Pulsar creates a plain
 *       subscription for every cursor): adopted, same cursor, if no consumer is attached to it.</li>
 *   <li>Existing subscription that is not broadcast: refused with a message that says so.</li>
 * </ul>
 * Before adopting an existing cursor it loads the consumers' saved positions ({@link PositionStore#load}); a new
 * subscription discards whatever was saved under its name before ({@link PositionStore#discard}).
 *
 * <p>Threading: runs on whatever thread completes the topic lookup. {@link #installing} ({@link InstallFlights}) makes
 * the many subscribes that arrive together after a topic move wait for one load and adoption; adoption swaps the map
 * entry with compare-and-remove then put-if-absent, and retries if another thread raced it.
 */
public final class SubscriptionInstaller {

    private static final Logger log = LoggerFactory.getLogger(SubscriptionInstaller.class);

    /** Stock's deduplication cursor ({@code PersistentTopic.DEDUPLICATION_CURSOR_NAME}, package-private there). */
    static final String DEDUPLICATION_CURSOR = "pulsar.dedup";

    private final BroadcastService service;
    /**
     * The failures of an installation that its waiters (for the same topic object) share: all but those another
     * subscribe may fare otherwise with, a subscription not found (an admin call may not create it, a subscribe may)
     * and one busy or changing (a race that the next attempt resolves).
     */
    static final Predicate<Throwable> SHARED_FAILURES = e -> !(e instanceof SubscriptionNotFoundException)
            && !(e instanceof SubscriptionBusyException) && !(e instanceof SubscriptionChanging);

    /**
     * The subscription changed under every attempt of an installation (another subscribe or an admin call replaced
     * it meanwhile): retriable. Stock answers it as not ready, which the clients retry; a {@code
     * SubscriptionBusyException} (the first version) is answered as a busy consumer, which fails a Java client's first
     * subscribe at once (a review, forty-sixth session).
     */
    static final class SubscriptionChanging extends BrokerServiceException.SubscriptionFencedException {
        SubscriptionChanging() {
            super("Subscription is changing, retry");
        }
    }

    /** Installations under way, by topic and subscription. */
    private final InstallFlights installing = new InstallFlights(SHARED_FAILURES);

    public SubscriptionInstaller(BroadcastService service) {
        this.service = service;
    }

    /**
     * Makes sure {@code name} on {@code topic} is a broadcast subscription.
     *
     * @param allowCreate whether a missing subscription may be created ({@code allowAutoSubscriptionCreation})
     */
    public CompletableFuture<Void> install(PersistentTopic topic, String name, InitialPosition initialPosition,
                                           Map<String, String> requestedProperties, boolean allowCreate) {
        PersistentSubscription existing = topic.getSubscriptions().get(name);
        if (existing instanceof BroadcastSubscription) {
            return CompletableFuture.completedFuture(null);
        }
        return installing.run(topic.getName() + "\0" + name, topic,
                () -> installOnce(topic, name, initialPosition, requestedProperties, allowCreate),
                () -> install(topic, name, initialPosition, requestedProperties, allowCreate));
    }

    private CompletableFuture<Void> installOnce(PersistentTopic topic, String name, InitialPosition initialPosition,
                                                Map<String, String> requestedProperties, boolean allowCreate) {
        if (!BroadcastSubscription.servedHere(topic)) {
            // Closed meanwhile: loading the saved positions now would take them over from the topic's next owner.
            return topicClosing();
        }
        PersistentSubscription existing = topic.getSubscriptions().get(name);
        if (existing != null) {
            if (existing instanceof BroadcastSubscription || !BroadcastSubscription.isMarkedBroadcast(existing)) {
                return adopt(topic, existing, null);
            }
            return start(topic, name, true).thenCompose(start -> adopt(topic, existing, start));
        }
        Exception refused = refusedBeforeCreate(topic, name);
        if (refused != null) {
            return CompletableFuture.failedFuture(refused);
        }
        if (!allowCreate) {
            return CompletableFuture.failedFuture(new SubscriptionNotFoundException("Subscription does not exist"));
        }
        Map<String, String> properties = new HashMap<>(requestedProperties);
        properties.put(BroadcastMode.KEY, BroadcastMode.BROADCAST);
        // The subscription may be missing from the topic's map while its cursor exists (a topic that a producer
        // loaded moments ago on a new owner; any topic load with lazyCursorRecovery=true): stock createSubscription
        // then opens that cursor, and the consumers attached to it before must be treated as reconnecting (saved
        // positions, or the recovery window), not as new ones.
        return cursorExists(topic, name).thenCompose(cursorExisted ->
                topic.createSubscription(name, initialPosition, false, properties)
                        .thenCompose(created -> start(topic, name, cursorExisted)
                                .thenCompose(start -> adopt(topic, (PersistentSubscription) created, start))));
    }

    /**
     * What stock's subscribe path refuses before it creates a subscription, refused here with stock's exception and
     * message, since this creates it first: a blank name, the names of the deduplication and replication cursors
     * (a broadcast subscription by such a name would take over that cursor), and a topic whose subscription types
     * policy leaves out Failover. Null when stock would go on.
     */
    private static Exception refusedBeforeCreate(PersistentTopic topic, String name) {
        if (name == null || name.isBlank()) {
            return new NamingException("Empty subscription name");
        }
        if (name.startsWith(topic.getReplicatorPrefix()) || name.equals(DEDUPLICATION_CURSOR)) {
            return new NamingException("Subscription with reserved subscription name attempted");
        }
        try {
            if (!EventsTopicNames.isTopicPoliciesSystemTopic(topic.getName())
                    && !topic.checkSubscriptionTypesEnable(SubType.Failover)) {
                return new NotAllowedException("Topic[{" + topic.getName() + "}] doesn't support Failover sub type!");
            }
        } catch (Exception e) {
            return e;
        }
        return null;
    }

    /**
     * How the subscription starts ({@link StartDecision}): with its saved positions when its cursor existed and they
     * can be read; in the recovery window when they are unreadable (duplicates, never loss); refused as not ready when
     * reading them failed (the retry reads them again); afresh, with nothing saved, when it is new.
     */
    private CompletableFuture<SubscriptionStart> start(PersistentTopic topic, String name, boolean cursorExisted) {
        if (!BroadcastSubscription.servedHere(topic)) {
            // Closed meanwhile: loading or discarding the saved positions now would take them over from the topic's
            // next owner.
            return topicClosing();
        }
        PositionStore store = service.positionStore(topic.getName(), name, () -> ownsTopic(topic));
        String logName = "[" + topic.getName() + "][" + name + "]";
        if (!cursorExisted) {
            return StartDecision.fresh(store, service.config(), () -> BroadcastSubscription.servedHere(topic), logName);
        }
        return StartDecision.resume(store, service.config(), System::currentTimeMillis,
                () -> BroadcastSubscription.servedHere(topic), logName);
    }

    /**
     * Whether this broker still owns {@code topic}: serves it, or still holds its bundle (a bundle unload closes its
     * topics, and drops them from the broker's map, before it releases the bundle).
     */
    private CompletableFuture<Boolean> ownsTopic(PersistentTopic topic) {
        if (BroadcastSubscription.servedHere(topic)) {
            return CompletableFuture.completedFuture(true);
        }
        NamespaceService namespaces = service.pulsar().getNamespaceService();
        return namespaces.getBundleAsync(TopicName.get(topic.getName()))
                .thenApply(bundle -> namespaces.getOwnershipCache().getOwnedBundle(bundle) != null);
    }

    /** Refuses an installation on a topic that left this broker ({@code ServiceNotReady}, which clients retry). */
    private static <T> CompletableFuture<T> topicClosing() {
        return CompletableFuture.failedFuture(new TopicFencedException("Topic is closing"));
    }

    private CompletableFuture<Void> adopt(PersistentTopic topic, PersistentSubscription existing,
                                          SubscriptionStart start) {
        for (int attempt = 0; attempt < 10; attempt++) {
            if (existing instanceof BroadcastSubscription) {
                return CompletableFuture.completedFuture(null);
            }
            if (!BroadcastSubscription.isMarkedBroadcast(existing)) {
                return CompletableFuture.failedFuture(new NotAllowedException("Subscription '" + existing.getName()
                        + "' already exists and is not a broadcast subscription: use another subscription name, or"
                        + " drop " + BroadcastMode.KEY + " to join it as a stock consumer"));
            }
            if (start == null) {
                break;
            }
            synchronized (existing) {
                if (!existing.getConsumers().isEmpty()) {
                    return CompletableFuture.failedFuture(new SubscriptionBusyException("Subscription '"
                            + existing.getName() + "' is in use by consumers without " + BroadcastMode.KEY + "="
                            + BroadcastMode.BROADCAST));
                }
                if (topic.getSubscriptions().remove(existing.getName(), existing)) {
                    closeStockDispatcher(existing);
                    BroadcastSubscription ours = new BroadcastSubscription(topic, existing.getName(),
                            existing.getCursor(), existing.getSubscriptionProperties(), service, start);
                    PersistentSubscription raced = topic.getSubscriptions().putIfAbsent(existing.getName(), ours);
                    if (raced == null) {
                        if (ours.closeIfOrphaned()) { // the topic's close ran meanwhile and did not find it
                            return topicClosing();
                        }
                        log.info("[{}][{}] Broadcast subscription installed ({})", topic.getName(),
                                existing.getName(), start.recovering ? "existing cursor, recovery window"
                                        : start.restored != null ? "existing cursor, saved positions" : "new");
                        return CompletableFuture.completedFuture(null);
                    }
                    // Discarded before it served anyone: its close must not save (what it loaded is still there,
                    // for whichever installation serves the name; a save could overwrite that one's newer saves).
                    ours.broadcastDispatcher().abandonPositions();
                    ours.broadcastDispatcher().close();
                }
            }
            existing = topic.getSubscriptions().get(existing.getName());
            if (existing == null) {
                return CompletableFuture.failedFuture(new SubscriptionNotFoundException("Subscription was removed"));
            }
        }
        return CompletableFuture.failedFuture(new SubscriptionChanging());
    }

    /**
     * Whether the subscription's managed cursor exists: in the managed ledger's list, or, while a cursor is still
     * being recovered (stock's {@code lazyCursorRecovery=true} leaves it out of that list until then), its node in
     * the metadata store. Regression (twenty-seventh session, a review): with lazy recovery the broadcast subscribe
     * that loaded a topic found neither the subscription nor the cursor, discarded the saved positions as a new
     * subscription's, and every consumer lost what it had not acknowledged.
     */
    private CompletableFuture<Boolean> cursorExists(PersistentTopic topic, String subscription) {
        String cursorName = Codec.encode(subscription);
        if (topic.getManagedLedger() instanceof ManagedLedgerImpl
                && ((ManagedLedgerImpl) topic.getManagedLedger()).getCursors().get(cursorName) != null) {
            return CompletableFuture.completedFuture(true);
        }
        return service.pulsar().getLocalMetadataStore().exists(
                PositionNodes.cursorNode(topic.getManagedLedger().getName(), cursorName));
    }

    private static void closeStockDispatcher(PersistentSubscription stock) {
        Dispatcher old = stock.getDispatcher();
        if (old != null) {
            old.close();
        }
    }
}
