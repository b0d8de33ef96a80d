package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;

import io.jsonwebtoken.SignatureAlgorithm;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import javax.crypto.SecretKey;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.broker.authentication.AuthenticationProviderToken;
import org.apache.pulsar.broker.authentication.utils.AuthTokenUtils;
import org.apache.pulsar.client.api.AuthenticationFactory;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.impl.auth.AuthenticationToken;
import org.apache.pulsar.common.naming.NamespaceName;
import org.apache.pulsar.common.policies.data.AuthAction;
import org.apache.pulsar.common.policies.data.Policies;
import org.testng.annotations.AfterMethod;

/**
 * A broker with token authentication and authorization on, as an operator would secure it: one secret key, the
 * super-user {@value #ADMIN} (also the broker's own client role), the proxy role {@value #PROXY} (stock
 * {@code proxyRoles}), and {@link #token} for any role. The inherited client is the super-user's; {@link #clientAs}
 * builds one for another role, closed after the test.
 *
 * <p>Threading: TestNG's test thread only; the key is created once per test class.
 */
public abstract class TokenAuthTestBase extends BroadcastTestBase {

    protected static final String ADMIN = "admin";
    /** The role a proxy authenticates with; it must name the client it acts for ({@code X-Original-Principal}). */
    protected static final String PROXY = "proxy";
    /** Long enough for a loaded machine, short enough to wait out the client's retries of a retriable error. */
    protected static final int OPERATION_TIMEOUT_SECONDS = 8;

    private final SecretKey secret = AuthTokenUtils.createSecretKey(SignatureAlgorithm.HS256);
    /** Clients of the current test, closed after it; test thread only. */
    private final List<PulsarClient> roleClients = new ArrayList<>();

    @Override
    protected void configureBroker(ServiceConfiguration conf) {
        conf.setAuthenticationEnabled(true);
        conf.setAuthenticationProviders(Set.of(AuthenticationProviderToken.class.getName()));
        conf.getProperties().setProperty("tokenSecretKey",
                "data:;base64," + Base64.getEncoder().encodeToString(secret.getEncoded()));
        conf.setAuthorizationEnabled(true);
        conf.setSuperUserRoles(Set.of(ADMIN));
        conf.setProxyRoles(Set.of(PROXY));
        conf.setBrokerClientAuthenticationPlugin(AuthenticationToken.class.getName());
        conf.setBrokerClientAuthenticationParameters("token:" + token(ADMIN));
    }

    @Override
    protected PulsarClient newClient() throws PulsarClientException {
        return PulsarClient.builder().serviceUrl(cluster.serviceUrl())
                .authentication(AuthenticationFactory.token(token(ADMIN))).build();
    }

    /** A token for {@code role}, signed with the broker's key. */
    protected String token(String role) {
        return AuthTokenUtils.createToken(secret, role, Optional.empty());
    }

    @AfterMethod(alwaysRun = true)
    public void closeRoleClients() throws Exception {
        closeAll(roleClients);
        roleClients.clear();
    }

    /** A client acting as {@code role}; closed after the test. */
    protected PulsarClient clientAs(String role) throws PulsarClientException {
        PulsarClient c = PulsarClient.builder().serviceUrl(cluster.serviceUrl())
                .authentication(AuthenticationFactory.token(token(role)))
                .operationTimeout(OPERATION_TIMEOUT_SECONDS, TimeUnit.SECONDS).build();
        roleClients.add(c);
        return c;
    }

    /** A new namespace {@code public/<prefix>-<random>} of this cluster. */
    protected String newNamespace(String prefix) throws Exception {
        String namespace = "public/" + prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
        cluster.admin().namespaces().createNamespace(namespace, Set.of(cluster.clusterName()));
        return namespace;
    }

    protected static String topicIn(String namespace) {
        return "persistent://" + namespace + "/t-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** Grants {@code action} on {@code namespace} to {@code role} and waits until the broker's policies have it. */
    protected void grant(String namespace, String role, AuthAction action) throws Exception {
        cluster.admin().namespaces().grantPermissionOnNamespace(namespace, role, Set.of(action));
        awaitPolicies(namespace, p -> {
            Set<AuthAction> actions = p.auth_policies.getNamespaceAuthentication().get(role);
            return actions != null && actions.contains(action);
        });
    }

    /** Waits until the broker's cached namespace policies (what authorization reads) satisfy {@code condition}. */
    protected void awaitPolicies(String namespace, Predicate<Policies> condition) {
        await().atMost(Duration.ofSeconds(20)).until(() -> cluster.broker().getPulsarResources()
                .getNamespaceResources().getPolicies(NamespaceName.get(namespace)).map(condition::test)
                .orElse(false));
    }
}
