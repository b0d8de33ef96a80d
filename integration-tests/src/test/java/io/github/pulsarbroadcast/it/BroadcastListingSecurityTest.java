package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;

import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import io.jsonwebtoken.SignatureAlgorithm;
import java.time.Duration;
import java.util.Base64;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import javax.crypto.SecretKey;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.broker.authentication.AuthenticationProviderToken;
import org.apache.pulsar.broker.authentication.utils.AuthTokenUtils;
import org.apache.pulsar.client.api.AuthenticationFactory;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.impl.auth.AuthenticationToken;
import org.apache.pulsar.common.naming.NamespaceName;
import org.apache.pulsar.common.policies.data.AuthAction;
import org.testng.annotations.Test;

/**
 * The consumer listing on a broker with token authentication and authorization: the broker's authentication filter
 * applies (no token: 401), and the caller needs what stock topic stats need (topic operation GET_STATS): a role
 * without permission on the namespace gets 403, a role granted consume gets 200, and so does the super-user.
 *
 * <p>Threading: TestNG's test thread only.
 */
public class BroadcastListingSecurityTest extends BroadcastTestBase {

    private static final String ADMIN = "admin";

    private final SecretKey secret = AuthTokenUtils.createSecretKey(SignatureAlgorithm.HS256);

    @Override
    protected void configureBroker(ServiceConfiguration conf) {
        conf.setAuthenticationEnabled(true);
        conf.setAuthenticationProviders(Set.of(AuthenticationProviderToken.class.getName()));
        conf.getProperties().setProperty("tokenSecretKey",
                "data:;base64," + Base64.getEncoder().encodeToString(secret.getEncoded()));
        conf.setAuthorizationEnabled(true);
        conf.setSuperUserRoles(Set.of(ADMIN));
        conf.setBrokerClientAuthenticationPlugin(AuthenticationToken.class.getName());
        conf.setBrokerClientAuthenticationParameters("token:" + token(ADMIN));
    }

    @Override
    protected PulsarClient newClient() throws PulsarClientException {
        return PulsarClient.builder().serviceUrl(cluster.serviceUrl())
                .authentication(AuthenticationFactory.token(token(ADMIN))).build();
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void onlyRolesThatMaySeeTheTopicsStatsGetTheListing() throws Exception {
        String namespace = "public/listing-" + UUID.randomUUID().toString().substring(0, 8);
        cluster.admin().namespaces().createNamespace(namespace, Set.of(cluster.clusterName()));
        cluster.admin().namespaces().grantPermissionOnNamespace(namespace, "reader", Set.of(AuthAction.consume));
        await().atMost(Duration.ofSeconds(20)).until(() -> cluster.broker().getPulsarResources()
                .getNamespaceResources().getPolicies(NamespaceName.get(namespace))
                .map(p -> p.auth_policies.getNamespaceAuthentication().containsKey("reader")).orElse(false));
        String topic = "persistent://" + namespace + "/t";
        try (Consumer<String> c = Broadcast.configure(client.newConsumer(Schema.STRING)).topic(topic)
                .subscriptionName("fleet").consumerName("vehicle-1").subscribe()) {
            String url = ListingHttp.url(cluster.webServiceUrl(), topic, "fleet", "sort=lag");

            ListingHttp.Answer anonymous = ListingHttp.get(url, null);
            assertEquals(anonymous.status, 401, anonymous.toString());

            ListingHttp.Answer stranger = ListingHttp.get(url, token("stranger"));
            assertEquals(stranger.status, 403, stranger.toString());
            assertTrue(stranger.body.get("reason").asText().contains("GET_STATS"), stranger.toString());

            ListingHttp.Answer reader = ListingHttp.get(url, token("reader"));
            assertEquals(reader.status, 200, reader.toString());
            assertEquals(reader.body.get("consumers").get(0).get("name").asText(), "vehicle-1");

            ListingHttp.Answer admin = ListingHttp.get(url, token(ADMIN));
            assertEquals(admin.status, 200, admin.toString());
            assertEquals(admin.body.get("total").asInt(), 1);

            // Parameters are checked before authorization: a 400 depends on the query string alone.
            ListingHttp.Answer badButForbidden = ListingHttp.get(
                    ListingHttp.url(cluster.webServiceUrl(), topic, "fleet", "limit=0"), token("stranger"));
            assertEquals(badButForbidden.status, 400, "parameters are checked first: " + badButForbidden);
        }
    }

    private String token(String role) {
        return AuthTokenUtils.createToken(secret, role, Optional.empty());
    }
}
