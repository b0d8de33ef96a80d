package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertNull;
import static org.testng.Assert.assertTrue;

import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import java.time.Duration;
import java.util.Set;
import java.util.UUID;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Schema;
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
public class BroadcastListingSecurityTest extends TokenAuthTestBase {





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
            assertNull(anonymous.body, "the authentication filter's 401 is not JSON (operations.md says so)");

            ListingHttp.Answer stranger = ListingHttp.get(url, token("stranger"));
            assertEquals(stranger.status, 403, stranger.toString());
            assertTrue(stranger.body.get("reason").asText().contains("GET_STATS"), stranger.toString());

            ListingHttp.Answer reader = ListingHttp.get(url, token("reader"));
            assertEquals(reader.status, 200, reader.toString());
            assertEquals(reader.body.get("consumers").get(0).get("name").asText(), "vehicle-1");

            ListingHttp.Answer admin = ListingHttp.get(url, token(ADMIN));
            assertEquals(admin.status, 200, admin.toString());
            assertEquals(admin.body.get("total").asInt(), 1);

            // The command line sends the token it is given (operations.md: --auth-token, --auth-token-file).
            String[] cli = {"--topic", topic, "--subscription", "fleet", "--web-url", cluster.webServiceUrl()};
            ConsumersCli withToken = ConsumersCli.run(cli, "--auth-token", token("reader"));
            assertEquals(withToken.exit, 0, withToken.err);
            assertTrue(withToken.out.contains("vehicle-1"), withToken.out);
            java.nio.file.Path tokenFile = java.nio.file.Files.createTempFile("reader", ".token");
            try {
                java.nio.file.Files.writeString(tokenFile, token("reader") + "\n");
                ConsumersCli fromFile = ConsumersCli.run(cli, "--auth-token-file", tokenFile.toString());
                assertEquals(fromFile.exit, 0, fromFile.err);
            } finally {
                java.nio.file.Files.delete(tokenFile);
            }
            ConsumersCli without = ConsumersCli.run(cli);
            assertEquals(without.exit, 1, without.out);
            assertTrue(without.err.contains("HTTP 401"), without.err);

            // Parameters are checked before authorization: a 400 depends on the query string alone.
            ListingHttp.Answer badButForbidden = ListingHttp.get(
                    ListingHttp.url(cluster.webServiceUrl(), topic, "fleet", "limit=0"), token("stranger"));
            assertEquals(badButForbidden.status, 400, "parameters are checked first: " + badButForbidden);
        }
    }

}
