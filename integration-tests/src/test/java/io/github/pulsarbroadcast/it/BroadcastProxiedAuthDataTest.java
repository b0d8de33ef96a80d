package io.github.pulsarbroadcast.it;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertTrue;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.broker.authentication.AuthenticationDataSource;
import org.apache.pulsar.broker.authorization.PulsarAuthorizationProvider;
import org.apache.pulsar.common.api.proto.BaseCommand;
import org.apache.pulsar.common.naming.TopicName;
import org.apache.pulsar.common.policies.data.AuthAction;
import org.apache.pulsar.common.policies.data.TopicOperation;
import org.apache.pulsar.common.protocol.Commands;
import org.testng.annotations.Test;

/**
 * A proxied subscribe whose proxy forwards the client's own credentials (stock {@code
 * authenticateOriginalAuthData=true}): each role is authorized with its own authentication data, the proxy's role
 * with the proxy's token and the client's with the client's, by the plugin's check before it prepares a broadcast
 * subscription as by stock's. An authorization provider that reads the data (roles from several claims, a custom
 * provider) would otherwise decide the proxy's role on the client's credentials. Regression (forty-sixth session, a
 * review): the plugin passed the client's data with the proxy's role.
 *
 * <p>Threading: TestNG's test thread; {@link #CHECKS} is written by the broker's threads.
 */
public class BroadcastProxiedAuthDataTest extends TokenAuthTestBase {

    private static final String CAR = "car";
    /** Every CONSUME check the broker asked: "role with token-of-role" (or the role whose token came with it). */
    static final List<String> CHECKS = new CopyOnWriteArrayList<>();

    /** Stock's provider, recording each CONSUME check's role and the role whose token its data carries. */
    public static final class RecordingProvider extends PulsarAuthorizationProvider {
        static volatile BroadcastProxiedAuthDataTest test;

        @Override
        public CompletableFuture<Boolean> allowTopicOperationAsync(TopicName topic, String role,
                                                                   TopicOperation operation,
                                                                   AuthenticationDataSource data) {
            if (operation == TopicOperation.CONSUME) {
                CHECKS.add(role + " with " + test.tokenOwner(data));
            }
            return super.allowTopicOperationAsync(topic, role, operation, data);
        }
    }

    @Override
    protected void configureBroker(ServiceConfiguration conf) {
        super.configureBroker(conf);
        RecordingProvider.test = this;
        conf.setAuthorizationProvider(RecordingProvider.class.getName());
        conf.setAuthenticateOriginalAuthData(true);
    }

    /** The role whose token {@code data} carries, as far as this test's roles go. */
    String tokenOwner(AuthenticationDataSource data) {
        String token = data != null && data.hasDataFromCommand() ? data.getCommandData() : null;
        for (String role : new String[] {PROXY, CAR, ADMIN}) {
            if (token(role).equals(token)) {
                return role;
            }
        }
        return "no token of this test";
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void eachRoleIsAuthorizedWithItsOwnData() throws Exception {
        String namespace = newNamespace("proxied-data");
        grant(namespace, CAR, AuthAction.consume);
        grant(namespace, PROXY, AuthAction.consume);
        String topic = topicIn(namespace);
        cluster.admin().topics().createNonPartitionedTopic(topic);
        try (RawProtocolConnection c = RawProtocolConnection.open(cluster.serviceUrl())) {
            c.send(Commands.newConnect("token", token(PROXY), Commands.getCurrentProtocolVersion(), "proxied-test",
                    null, CAR, token(CAR), "token"));
            assertEquals(c.next().getType(), BaseCommand.Type.CONNECTED);
            CHECKS.clear();
            assertEquals(BroadcastProxiedSubscribeTest.subscribe(c, topic, "fleet", true, 1), "SUCCESS");
            assertEquals(BroadcastProxiedSubscribeTest.subscribe(c, topic, "stock", false, 2), "SUCCESS");
        }
        List<String> checks = List.copyOf(CHECKS);
        assertTrue(checks.contains(PROXY + " with " + PROXY) && checks.contains(CAR + " with " + CAR), "" + checks);
        assertFalse(checks.stream().anyMatch(k -> !k.equals(PROXY + " with " + PROXY) && !k.equals(CAR + " with "
                + CAR)), "each role with its own token: " + checks);
    }
}
