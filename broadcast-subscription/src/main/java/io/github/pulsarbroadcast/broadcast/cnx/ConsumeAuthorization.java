package io.github.pulsarbroadcast.broadcast.cnx;

import java.util.concurrent.CompletableFuture;
import org.apache.pulsar.broker.authentication.AuthenticationDataSource;
import org.apache.pulsar.broker.authentication.AuthenticationDataSubscription;
import org.apache.pulsar.broker.service.BrokerService;
import org.apache.pulsar.common.naming.TopicName;
import org.apache.pulsar.common.policies.data.TopicOperation;

/**
 * Authorizes a CONSUME on a topic exactly as stock's subscribe path does: the connection's role with its
 * authentication data (for the subscription), and, behind a proxy, the original principal with its own data too;
 * allowed when authorization is off.
 *
 * <p>Threading: stateless; any thread (the authorization service answers asynchronously).
 */
final class ConsumeAuthorization {

    private ConsumeAuthorization() {
    }

    /** The connection's identity: its role and data, and the proxied client's (null without a proxy). */
    static CompletableFuture<Boolean> check(BrokerService brokerService, TopicName topicName, String subscription,
                                            String role, AuthenticationDataSource authData, String originalPrincipal,
                                            AuthenticationDataSource originalAuthData) {
        if (!brokerService.isAuthorizationEnabled()) {
            return CompletableFuture.completedFuture(true);
        }
        AuthenticationDataSource forSubscription = new AuthenticationDataSubscription(authData, subscription);
        CompletableFuture<Boolean> proxyAllowed = CompletableFuture.completedFuture(true);
        if (originalPrincipal != null) {
            AuthenticationDataSource original = originalAuthData != null
                    ? new AuthenticationDataSubscription(originalAuthData, subscription) : forSubscription;
            proxyAllowed = brokerService.getAuthorizationService().allowTopicOperationAsync(topicName,
                    TopicOperation.CONSUME, originalPrincipal, original);
        }
        CompletableFuture<Boolean> allowed = brokerService.getAuthorizationService().allowTopicOperationAsync(
                topicName, TopicOperation.CONSUME, role, forSubscription);
        return proxyAllowed.thenCombine(allowed, (a, b) -> a && b);
    }
}
