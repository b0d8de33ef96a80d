package io.github.pulsarbroadcast.broadcast.listing.http;

import java.net.URI;
import java.net.URL;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import javax.servlet.http.HttpServletRequest;
import javax.ws.rs.WebApplicationException;
import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.broker.authentication.AuthenticationDataSource;
import org.apache.pulsar.broker.namespace.LookupOptions;
import org.apache.pulsar.broker.service.BrokerServiceException;
import org.apache.pulsar.broker.service.Topic;
import org.apache.pulsar.broker.service.persistent.PersistentSubscription;
import org.apache.pulsar.broker.service.persistent.PersistentTopic;
import org.apache.pulsar.broker.web.AuthenticationFilter;
import org.apache.pulsar.broker.web.PulsarWebResource;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.impl.PulsarServiceNameResolver;
import org.apache.pulsar.common.naming.NamespaceName;
import org.apache.pulsar.common.naming.TopicName;
import org.apache.pulsar.common.partition.PartitionedTopicMetadata;
import org.apache.pulsar.common.policies.data.ClusterData;
import org.apache.pulsar.common.policies.data.TopicOperation;

/**
 * What the listing servlet asks of the broker, through stock types only: authorization (topic operation
 * {@code GET_STATS}, as stock topic stats check it), the cluster that serves the namespace and ownership (redirects
 * to a peer cluster or to the owner, as the stock admin API answers), the topic and the subscription. Every wait is
 * bounded by the broker's {@code metadataStoreOperationTimeoutSeconds}.
 *
 * <p>Threading: called on Jetty's web threads, concurrently; immutable after construction.
 */
final class BrokerSide {

    /** The header a proxy sets to the role of the client it acts for (as stock {@code PulsarWebResource}). */
    static final String ORIGINAL_PRINCIPAL_HEADER = "X-Original-Principal";
    /** The subscription property that marks a broadcast subscription (as the plugin's {@code BroadcastMode}). */
    static final String MODE_KEY = "pulsar.subscription.mode";
    static final String BROADCAST = "broadcast";
    /** The plugin's subscription class, by name: the servlet's class loader may not see the plugin's copy. */
    static final String SUBSCRIPTION_CLASS = "io.github.pulsarbroadcast.broadcast.dispatch.BroadcastSubscription";

    private final PulsarService pulsar;

    BrokerSide(PulsarService pulsar) {
        this.pulsar = pulsar;
    }

    /**
     * Refuses a caller that may not see the topic's stats: 401 when authentication is on and the request carries no
     * role, 403 when the role (and a proxy's original principal) is not allowed {@code GET_STATS}. Nothing is checked
     * when authentication or authorization is off, as stock.
     */
    void authorize(HttpServletRequest request, TopicName topic) throws HttpError {
        if (!pulsar.getConfiguration().isAuthenticationEnabled()
                || !pulsar.getBrokerService().isAuthorizationEnabled()) {
            return;
        }
        Object role = request.getAttribute(AuthenticationFilter.AuthenticatedRoleAttributeName);
        if (!(role instanceof String)) {
            throw new HttpError(401, "Need to authenticate to perform the request");
        }
        AuthenticationDataSource authData =
                (AuthenticationDataSource) request.getAttribute(AuthenticationFilter.AuthenticatedDataAttributeName);
        String original = request.getHeader(ORIGINAL_PRINCIPAL_HEADER);
        boolean allowed = await(pulsar.getBrokerService().getAuthorizationService().allowTopicOperationAsync(topic,
                TopicOperation.GET_STATS, original, (String) role, authData), "authorization");
        if (!allowed) {
            throw new HttpError(403, "Role '" + role + "'" + (original == null ? "" : " (for '" + original + "')")
                    + " is not authorized to list the consumers of " + topic + ": it needs the permission to see"
                    + " the topic's stats (topic operation GET_STATS)");
        }
    }

    /**
     * Passes when the topic's namespace is served in this cluster; otherwise, as stock topic stats answer
     * ({@code validateGlobalNamespaceOwnership}), a 307 redirect to a peer cluster that serves it, or 412 (the
     * namespace is deleted, has no cluster, or is not replicated here and no peer serves it). Without it the
     * ownership check below took the bundle here, and the topic's load deleted this cluster's copy of a topic no
     * longer replicated to it (stock's replication check on load; regression, forty-second session's review).
     */
    void checkCluster(HttpServletRequest request, TopicName topic) throws HttpError {
        NamespaceName namespace = topic.getNamespaceObject();
        String here = pulsar.getConfiguration().getClusterName();
        if (!namespace.isGlobal() && !here.equals(namespace.getCluster())) {
            throw new HttpError(412, "Namespace " + namespace + " belongs to cluster '" + namespace.getCluster()
                    + "', not to this broker's cluster '" + here + "'");
        }
        ClusterData peer = await(PulsarWebResource.checkLocalOrGetPeerReplicationCluster(pulsar, namespace),
                "replication check");
        if (peer == null) {
            return;
        }
        // As stock's redirect: the peer's TLS URL for an https request to a broker with a TLS web port, and the
        // request's own scheme (never a redirect from https to http, which would send credentials in the clear).
        boolean tls = request.isSecure() && pulsar.getConfiguration().getWebServicePortTls().isPresent()
                && peer.getServiceUrlTls() != null && !peer.getServiceUrlTls().isBlank();
        String peerUrl = tls ? peer.getServiceUrlTls() : peer.getServiceUrl();
        URI web;
        try {
            PulsarServiceNameResolver resolver = new PulsarServiceNameResolver();
            resolver.updateServiceUrl(peerUrl);
            web = resolver.resolveHostUri();
        } catch (RuntimeException | PulsarClientException e) {
            throw new HttpError(412, "Namespace " + namespace + " is served by cluster with web service URL '"
                    + peerUrl + "', which cannot be parsed: " + e);
        }
        String query = request.getQueryString();
        throw HttpError.redirect(request.getScheme() + "://" + web.getHost() + ":" + web.getPort()
                + request.getRequestURI() + (query == null ? "" : "?" + query));
    }

    /**
     * Passes when this broker owns the topic; otherwise throws a 307 redirect to the owner's web service URL, with
     * the request's path and query and {@code authoritative} set as stock sets it.
     */
    void checkOwnership(HttpServletRequest request, TopicName topic, boolean authoritative) throws HttpError {
        LookupOptions options = LookupOptions.builder().authoritative(authoritative)
                .requestHttps(request.isSecure()).readOnly(false).loadTopicsInBundle(false).build();
        Optional<URL> owner = await(pulsar.getNamespaceService().getWebServiceUrlAsync(topic, options), "lookup");
        if (owner.isEmpty()) {
            throw new HttpError(412, "Failed to find ownership for topic: " + topic);
        }
        if (await(pulsar.getNamespaceService().isServiceUnitOwnedAsync(topic), "ownership check")) {
            return;
        }
        URL url = owner.get();
        boolean leader = pulsar.getLeaderElectionService() != null && pulsar.getLeaderElectionService().isLeader();
        throw HttpError.redirect(url.getProtocol() + "://" + url.getHost() + ":" + url.getPort()
                + request.getRequestURI() + "?" + Parameters.withAuthoritative(request.getQueryString(), leader));
    }

    /** The broadcast subscription as a JDK function; 404 when the topic or subscription does not exist here. */
    Object subscription(TopicName topic, String name) throws HttpError {
        Optional<Topic> found = await(pulsar.getBrokerService().getTopicIfExists(topic.toString()), "topic load");
        if (found.isEmpty()) {
            PartitionedTopicMetadata meta = await(pulsar.getBrokerService()
                    .fetchPartitionedTopicMetadataAsync(topic), "partitioned-topic lookup");
            if (meta.partitions > 0) {
                throw new HttpError(400, "Topic " + topic + " is a partitioned topic with " + meta.partitions
                        + " partitions: list the consumers of one partition, e.g. " + topic.getPartition(0));
            }
            throw new HttpError(404, "Topic " + topic + " not found");
        }
        if (!(found.get() instanceof PersistentTopic)) {
            throw new HttpError(400, "Topic " + topic + " is not a persistent topic");
        }
        PersistentSubscription subscription = ((PersistentTopic) found.get()).getSubscription(name);
        if (subscription == null) {
            throw new HttpError(404, "Subscription '" + name + "' not found on topic " + topic);
        }
        if (subscription instanceof Function && SUBSCRIPTION_CLASS.equals(subscription.getClass().getName())) {
            return subscription;
        }
        if (BROADCAST.equals(subscription.getSubscriptionProperties().get(MODE_KEY))) {
            // Marked broadcast, but no broadcast consumer joined since this broker loaded the topic (or the plugin
            // is off here): no consumer is attached.
            return null;
        }
        throw new HttpError(409, "Subscription '" + name + "' on topic " + topic + " is not a broadcast subscription"
                + " (the listing serves only subscriptions with " + MODE_KEY + "=" + BROADCAST + ")");
    }

    /** Calls the plugin's listing of {@code subscription} ({@link #subscription}) with JDK types only. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> list(Object subscription, Map<String, String> parameters) {
        Object answer = ((Function<Map<String, String>, ?>) subscription).apply(parameters);
        if (!(answer instanceof Map)) {
            throw new IllegalStateException("The broadcast subscription answered " + answer + " instead of a map");
        }
        return (Map<String, Object>) answer;
    }

    private <T> T await(CompletableFuture<T> future, String what) throws HttpError {
        long timeout = pulsar.getConfiguration().getMetadataStoreOperationTimeoutSeconds();
        try {
            return future.get(timeout, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new HttpError(503, "Interrupted during the " + what);
        } catch (TimeoutException e) {
            throw new HttpError(503, "The " + what + " did not finish within " + timeout + " s; try again");
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            if (cause instanceof WebApplicationException) { // stock's own answer (e.g. 412 "Namespace is deleted")
                throw new HttpError(((WebApplicationException) cause).getResponse().getStatus(),
                        "The " + what + " failed: " + cause.getMessage());
            }
            // As stock: no owner found is 412; a bundle being loaded or unloaded here is retriable.
            int status = cause instanceof IllegalArgumentException || cause instanceof IllegalStateException ? 412
                    : cause instanceof BrokerServiceException.ServiceUnitNotReadyException ? 503 : 500;
            throw new HttpError(status, "The " + what + " failed: " + cause);
        }
    }
}
