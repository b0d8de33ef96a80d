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
import org.apache.pulsar.broker.service.BrokerService;
import org.apache.pulsar.broker.service.Topic;
import org.apache.pulsar.broker.service.persistent.PersistentSubscription;
import org.apache.pulsar.broker.service.persistent.PersistentTopic;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.apache.pulsar.common.sasl.SaslConstants;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Before the stock admin API changes a subscription in place ({@link SubscriptionOperation}), serves it as broadcast
 * when this broker owns the topic and holds the subscription, marked broadcast, as a plain one: after a topic move,
 * unload or broker restart, before any broadcast consumer is back. Without this the operation reached the managed
 * cursor alone and the consumers' saved positions won when they came back (a reset-cursor replayed nothing to them;
 * regression test {@code BroadcastUnservedAdminCallTest}). The subscription is installed exactly as a broadcast
 * consumer's subscribe installs it (saved positions loaded, the same {@link SubscriptionInstaller}, so a subscribe
 * and this wait for one installation); the stock handler then runs on the broadcast subscription.
 *
 * <p>Security: the broker's interceptor callback runs before stock's authentication filter, so this acts only for a
 * request that stock would let through: authenticated by the broker's own {@code AuthenticationService} when
 * authentication is enabled, and authorized for the operation by its {@code AuthorizationService} (the client role
 * and a proxy's original principal, as stock's admin handlers check them) when authorization is enabled too. A
 * request that fails either is passed on untouched, and stock refuses it. SASL requests (a handshake over several
 * requests) are passed on untouched.
 *
 * <p>Threading: called on the web server's request threads; waits for the installation at most the metadata store's
 * operation timeout, and on any failure passes the request on unchanged (the stock handler then acts as without the
 * plugin). Stateless apart from final fields.
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

    /** Serves the request's subscription as broadcast first when it must be (see the class); never throws. */
    public void prepare(HttpServletRequest request) {
        SubscriptionOperation op = SubscriptionOperation.parse(request.getMethod(), request.getRequestURI());
        if (op == null) {
            return;
        }
        try {
            long timeoutSeconds = pulsar.getConfiguration().getMetadataStoreOperationTimeoutSeconds();
            prepare(request, op).get(timeoutSeconds, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException | RuntimeException e) {
            Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
            log.warn("[{}][{}] Could not serve the subscription as broadcast before the admin call ({}): the call"
                    + " reaches the managed cursor alone: {}", op.topic, op.subscription, op.operation,
                    cause.toString());
        }
    }

    /**
     * A topic loaded here is looked at first (a map read); the request is checked as stock would check it before
     * anything else is done, so that nothing, not even a topic load, happens for a request stock refuses.
     */
    private CompletableFuture<Void> prepare(HttpServletRequest request, SubscriptionOperation op) {
        Optional<Topic> loaded = pulsar.getBrokerService().getTopicReference(op.topic.toString());
        if (loaded.isPresent() && !unserved(persistent(loaded), op)) {
            return CompletableFuture.completedFuture(null);
        }
        return allowed(request, op).thenCompose(allowed -> !allowed ? CompletableFuture.completedFuture(null)
                : ownedTopic(op).thenCompose(topic -> {
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
        PersistentSubscription subscription = topic == null ? null : topic.getSubscriptions().get(op.subscription);
        return subscription != null && !(subscription instanceof BroadcastSubscription)
                && BroadcastSubscription.isMarkedBroadcast(subscription);
    }

    /**
     * The topic when this broker owns it and it exists (loaded here if it was not: stock's handler would load it
     * too); null otherwise, when stock redirects the call to the owner or answers that the topic does not exist.
     */
    private CompletableFuture<PersistentTopic> ownedTopic(SubscriptionOperation op) {
        BrokerService brokers = pulsar.getBrokerService();
        Optional<Topic> loaded = brokers.getTopicReference(op.topic.toString());
        if (loaded.isPresent()) {
            return CompletableFuture.completedFuture(persistent(loaded));
        }
        return pulsar.getNamespaceService().isServiceUnitOwnedAsync(op.topic).thenCompose(owned -> owned
                ? brokers.getTopicIfExists(op.topic.toString()).thenApply(AdminCallPreparation::persistent)
                : CompletableFuture.completedFuture(null));
    }

    private static PersistentTopic persistent(Optional<Topic> topic) {
        return topic.isPresent() && topic.get() instanceof PersistentTopic ? (PersistentTopic) topic.get() : null;
    }

    /** Whether stock's filter and handler would let the request through (see the class). */
    private CompletableFuture<Boolean> allowed(HttpServletRequest request, SubscriptionOperation op) {
        if (!pulsar.getConfiguration().isAuthenticationEnabled()) {
            return CompletableFuture.completedFuture(true);
        }
        String sasl = request.getHeader(SaslConstants.SASL_HEADER_TYPE);
        if (sasl != null && !sasl.isEmpty()) {
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
