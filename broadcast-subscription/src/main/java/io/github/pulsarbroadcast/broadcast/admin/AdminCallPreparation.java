package io.github.pulsarbroadcast.broadcast.admin;

import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastSubscription;
import io.github.pulsarbroadcast.broadcast.dispatch.SubscriptionInstaller;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.servlet.http.HttpServletRequest;
import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.broker.authentication.AuthenticationDataHttps;
import org.apache.pulsar.broker.namespace.LookupOptions;
import org.apache.pulsar.broker.namespace.NamespaceService;
import org.apache.pulsar.broker.service.BrokerService;
import org.apache.pulsar.broker.service.BrokerServiceException.SubscriptionNotFoundException;
import org.apache.pulsar.broker.service.Topic;
import org.apache.pulsar.broker.service.persistent.PersistentTopic;
import org.apache.pulsar.broker.web.PulsarWebResource;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.apache.pulsar.common.intercept.InterceptException;
import org.apache.pulsar.common.naming.NamespaceName;
import org.apache.pulsar.common.sasl.SaslConstants;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Before the stock admin API changes a subscription in place ({@link SubscriptionOperation}), serves it as broadcast
 * when this broker owns the topic and holds the subscription, marked broadcast, as a plain one: after a topic move,
 * unload or broker restart, before any broadcast consumer is back. Without this the operation reached the managed
 * cursor alone and the consumers' saved positions won when they came back (a reset-cursor replayed nothing to them;
 * regression tests {@code BroadcastResetCursorTest.aReset...BeforeAnyConsumerIsBack...}). The subscription is
 * installed exactly as a broadcast consumer's subscribe installs it (saved positions loaded, the same
 * {@link SubscriptionInstaller}, so a subscribe and this wait for one installation); the stock handler then runs on
 * the broadcast subscription.
 *
 * <p>When no broker owns the topic's bundle (after a bundle unload or a restart, before any client looked the topic
 * up) it looks the topic up as stock's ownership check would (which takes the bundle when the load manager picks this
 * broker), after the checks stock's handler makes before that one ({@link #servedInThisCluster}), so that the
 * subscription is served here before the call; when another broker is picked, stock's handler redirects the call
 * there, and that broker's plugin does the same.
 *
 * <p>Security: in stock's order the broker's interceptor callback runs before stock's authentication filter (the
 * listing servlet moves it after, {@code listing.http.WebFilterOrder}, but this must not rely on it), so this acts
 * only for a request that stock's authentication and authorization would let through: authenticated by the broker's own
 * {@code AuthenticationService} when authentication is enabled, and authorized for the operation by its
 * {@code AuthorizationService} (the client role and a proxy's original principal, as stock's admin handlers check
 * them) when authorization is enabled too. A request that fails either is passed on untouched, and stock refuses it.
 * Requests authenticated by SASL (Kerberos) carry a header of their own on every request and are passed on untouched
 * (not covered). The request is authenticated twice (here and by stock's filter).
 *
 * <p>Threading: called on the web server's request threads, which it blocks until the subscription is served, at
 * most the metadata store's operation timeout. When serving it fails or takes longer, the call is refused (503, the
 * operator retries) rather than passed on to a subscription that a late installation could replace in the middle of
 * the call. Stateless apart from final fields.
 */
public final class AdminCallPreparation {

    private static final Logger log = LoggerFactory.getLogger(AdminCallPreparation.class);
    /** Stock's header for a proxy's original principal ({@code PulsarWebResource.ORIGINAL_PRINCIPAL_HEADER}). */
    private static final String ORIGINAL_PRINCIPAL_HEADER = "X-Original-Principal";

    private final PulsarService pulsar;
    private final SubscriptionInstaller installer;

    public AdminCallPreparation(PulsarService pulsar, SubscriptionInstaller installer) {
        this.pulsar = pulsar;
        this.installer = installer;
    }

    /**
     * Serves the request's subscription as broadcast first when it must be (see the class).
     *
     * @throws InterceptException (503) when that failed or did not finish in time: the call is refused
     */
    public void prepare(HttpServletRequest request) throws InterceptException {
        SubscriptionOperation op = SubscriptionOperation.parse(request.getMethod(), request.getRequestURI());
        if (op == null) {
            return;
        }
        Throwable failure;
        try {
            long timeoutSeconds = pulsar.getConfiguration().getMetadataStoreOperationTimeoutSeconds();
            prepare(request, op).get(timeoutSeconds, TimeUnit.SECONDS);
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failure = e;
        } catch (ExecutionException e) {
            failure = e.getCause();
        } catch (TimeoutException | RuntimeException e) {
            failure = e;
        }
        if (failure instanceof SubscriptionNotFoundException) {
            return; // deleted meanwhile: stock answers the call (404)
        }
        log.warn("[{}][{}] Could not serve the subscription as broadcast before the admin call {}; refused the call"
                + " (503): {}", op.topic, op.subscription, op.operation, failure.toString());
        throw new InterceptException(503, "Broadcast subscription " + op.subscription + " on " + op.topic
                + " could not be served before " + op.operation + " (" + failure + "); retry the call");
    }

    /**
     * A topic loaded here is looked at first (a map read); the request is checked as stock's authentication and
     * authorization would check it before anything else is done, so that nothing, not even a topic load, happens for
     * a request they refuse.
     */
    private CompletableFuture<Void> prepare(HttpServletRequest request, SubscriptionOperation op) {
        Optional<Topic> loaded = pulsar.getBrokerService().getTopicReference(op.topic.toString());
        if (loaded.isPresent() && !unserved(persistent(loaded), op)) {
            return CompletableFuture.completedFuture(null);
        }
        return allowed(request, op).thenCompose(allowed -> !allowed ? CompletableFuture.completedFuture(null)
                : ownedTopic(request, op).thenCompose(topic -> {
                    if (!unserved(topic, op)) {
                        return CompletableFuture.completedFuture(null);
                    }
                    log.info("[{}][{}] Serving the subscription as broadcast before the admin call {}", op.topic,
                            op.subscription, op.operation);
                    return installer.install(topic, op.subscription, InitialPosition.Latest, Map.of(), false);
                }));
    }

    /** Whether {@code topic} holds the subscription, marked broadcast, as a plain one. */
    private static boolean unserved(PersistentTopic topic, SubscriptionOperation op) {
        return topic != null
                && BroadcastSubscription.isMarkedButNotServed(topic.getSubscriptions().get(op.subscription));
    }

    /**
     * The topic when this broker owns it, or takes it now as stock's ownership check would, and the topic exists
     * (loaded here if it was not: stock's handler would load it too); null otherwise, when stock redirects the call
     * to the owner or answers that the topic does not exist.
     */
    private CompletableFuture<PersistentTopic> ownedTopic(HttpServletRequest request, SubscriptionOperation op) {
        BrokerService brokers = pulsar.getBrokerService();
        Optional<Topic> loaded = brokers.getTopicReference(op.topic.toString());
        if (loaded.isPresent()) {
            return CompletableFuture.completedFuture(persistent(loaded));
        }
        NamespaceService namespaces = pulsar.getNamespaceService();
        LookupOptions lookup = LookupOptions.builder().authoritative(authoritative(request))
                .requestHttps("https".equalsIgnoreCase(request.getScheme())).readOnly(false)
                .loadTopicsInBundle(false).build();
        return servedInThisCluster(op).thenCompose(here -> !here ? CompletableFuture.completedFuture(false)
                        : namespaces.isServiceUnitOwnedAsync(op.topic).thenCompose(owned -> owned
                                ? CompletableFuture.completedFuture(true)
                                : namespaces.getWebServiceUrlAsync(op.topic, lookup)
                                        .thenCompose(url -> namespaces.isServiceUnitOwnedAsync(op.topic))))
                .thenCompose(owned -> owned
                        ? brokers.getTopicIfExists(op.topic.toString()).thenApply(AdminCallPreparation::persistent)
                        : CompletableFuture.completedFuture(null));
    }

    /**
     * What stock's handlers check before they look at ownership, so that no bundle is taken and no topic loaded here
     * for a call stock answers without them: the namespace exists, is not deleted and is replicated to this cluster
     * (stock's {@code checkLocalOrGetPeerReplicationCluster}; a v1 name's cluster is this one), and the name is not
     * a partitioned topic's (stock fans such a call out to each partition, whose own call comes here too).
     */
    private CompletableFuture<Boolean> servedInThisCluster(SubscriptionOperation op) {
        NamespaceName namespace = op.topic.getNamespaceObject();
        if (!namespace.isGlobal() && !pulsar.getConfiguration().getClusterName().equals(namespace.getCluster())) {
            return CompletableFuture.completedFuture(false);
        }
        return PulsarWebResource.checkLocalOrGetPeerReplicationCluster(pulsar, namespace)
                .thenCompose(peer -> peer != null ? CompletableFuture.completedFuture(false)
                        : op.topic.isPartitioned() ? CompletableFuture.completedFuture(true)
                        : pulsar.getBrokerService().fetchPartitionedTopicMetadataAsync(op.topic)
                                .thenApply(metadata -> metadata.partitions == 0))
                .exceptionally(refused -> false);
    }

    /** The call's {@code authoritative} query parameter (stock's redirect sets it), read from the query string. */
    private static boolean authoritative(HttpServletRequest request) {
        String query = request.getQueryString();
        if (query == null) {
            return false;
        }
        for (String pair : query.split("&")) {
            if (pair.equalsIgnoreCase("authoritative=true")) {
                return true;
            }
        }
        return false;
    }

    private static PersistentTopic persistent(Optional<Topic> topic) {
        return topic.isPresent() && topic.get() instanceof PersistentTopic ? (PersistentTopic) topic.get() : null;
    }

    /** Whether stock's filter and handler would let the request through (see the class). */
    private CompletableFuture<Boolean> allowed(HttpServletRequest request, SubscriptionOperation op) {
        if (!pulsar.getConfiguration().isAuthenticationEnabled()) {
            return CompletableFuture.completedFuture(true);
        }
        // Only what stock's authentication filter takes for a SASL request (its isSaslRequest: the header says
        // Kerberos); any other value is authenticated as usual (regression, forty-second session's review).
        if (SaslConstants.SASL_TYPE_VALUE.equalsIgnoreCase(request.getHeader(SaslConstants.SASL_HEADER_TYPE))) {
            return CompletableFuture.completedFuture(false);
        }
        String role;
        try {
            role = pulsar.getBrokerService().getAuthenticationService().authenticateHttpRequest(request);
        } catch (Exception notAuthenticated) {
            return CompletableFuture.completedFuture(false);
        }
        if (!pulsar.getBrokerService().isAuthorizationEnabled()) {
            return CompletableFuture.completedFuture(true);
        }
        AuthenticationDataHttps authData = new AuthenticationDataHttps(request);
        authData.setSubscription(op.subscription);
        return pulsar.getBrokerService().getAuthorizationService().allowTopicOperationAsync(op.topic, op.operation,
                request.getHeader(ORIGINAL_PRINCIPAL_HEADER), role, authData)
                .exceptionally(e -> false);
    }
}
