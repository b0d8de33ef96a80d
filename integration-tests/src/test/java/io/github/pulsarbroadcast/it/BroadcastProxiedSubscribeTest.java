package io.github.pulsarbroadcast.it;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;

import io.github.pulsarbroadcast.broadcast.BroadcastMode;
import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastSubscription;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionType;
import org.apache.pulsar.common.api.proto.BaseCommand;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.apache.pulsar.common.api.proto.CommandSubscribe.SubType;
import org.apache.pulsar.common.policies.data.AuthAction;
import org.apache.pulsar.common.protocol.Commands;
import org.testng.annotations.Test;

/**
 * A subscribe through a proxy, on the binary protocol: the proxy's connection authenticates as a proxy role and names
 * the client it acts for (CONNECT's original principal, as Pulsar's proxy sends it), and stock authorizes both
 * roles. The connection goes straight to the broker, as a proxy's does, so the lookup's own check is not in the way:
 * what is tested is the subscribe's. Each case is decided for a broadcast subscribe as for a stock Failover one, on the
 * first join (which creates the broadcast subscription: a refused one must create nothing) and on a join of a
 * subscription already served.
 *
 * <p>Threading: TestNG's test thread only.
 */
public class BroadcastProxiedSubscribeTest extends TokenAuthTestBase {

    private static final String CAR = "car";
    private static final String STRANGER = "stranger";

    @Test(groups = "integration", timeOut = 120_000)
    public void aProxiedSubscribeIsDecidedAsAStockOne() throws Exception {
        String namespace = newNamespace("proxied");
        grant(namespace, CAR, AuthAction.consume);
        grant(namespace, PROXY, AuthAction.consume);
        String served = topicIn(namespace);
        closeAfterTest(Broadcast.configure(client.newConsumer(Schema.STRING)).topic(served)
                .subscriptionName("fleet").consumerName("first").subscribe());
        closeAfterTest(client.newConsumer(Schema.STRING).topic(served).subscriptionName("stock")
                .subscriptionType(SubscriptionType.Failover).consumerName("first").subscribe());
        String[][] cases = { // authenticated role, original principal, allowed
            {PROXY, CAR, "yes"}, {PROXY, STRANGER, "no"}, {CAR, STRANGER, "no"}, {STRANGER, CAR, "no"},
        };
        int id = 0;
        for (String[] k : cases) {
            String who = k[0] + " for " + k[1];
            String expected = k[2].equals("yes") ? "SUCCESS" : "ERROR AuthorizationError";
            String first = topicIn(namespace);
            cluster.admin().topics().createNonPartitionedTopic(first);
            try (RawProtocolConnection c = connect(k[0], k[1])) {
                assertEquals(subscribe(c, first, "fleet", true, ++id), expected, who + ", first broadcast join");
                assertEquals(subscribe(c, first, "stock", false, ++id), expected, who + ", stock");
                assertEquals(subscribe(c, served, "fleet", true, ++id), expected, who + ", served broadcast");
                assertEquals(subscribe(c, served, "stock", false, ++id), expected, who + ", served stock");
            }
            List<String> created = cluster.admin().topics().getSubscriptions(first);
            assertEquals(created.size(), expected.equals("SUCCESS") ? 2 : 0, who + ": " + created);
            if (expected.equals("SUCCESS")) {
                assertTrue(brokerSubscription(first, "fleet") instanceof BroadcastSubscription, who);
            }
        }
    }

    /** A connection as {@code role} naming {@code originalPrincipal}, its CONNECT answered with CONNECTED. */
    private RawProtocolConnection connect(String role, String originalPrincipal) throws IOException {
        RawProtocolConnection c = RawProtocolConnection.open(cluster.serviceUrl());
        try {
            c.send(Commands.newConnect("token", token(role), Commands.getCurrentProtocolVersion(), "proxied-test",
                    null, originalPrincipal, null, null));
            BaseCommand answer = c.next();
            assertEquals(answer.getType(), BaseCommand.Type.CONNECTED, role + " for " + originalPrincipal);
            return c;
        } catch (IOException | RuntimeException | AssertionError e) {
            c.close();
            throw e;
        }
    }

    /** SUBSCRIBE (Failover, with the broadcast key or without) and the broker's answer: SUCCESS or ERROR and why. */
    static String subscribe(RawProtocolConnection c, String topic, String subscription, boolean broadcast,
            long id) throws IOException {
        Map<String, String> properties = broadcast ? Map.of(BroadcastMode.KEY, BroadcastMode.BROADCAST) : Map.of();
        c.send(Commands.newSubscribe(topic, subscription, id, id, SubType.Failover, 0, "proxied-" + id, true, null,
                properties, false, false, InitialPosition.Earliest, 0, null, true, null, properties, 0));
        BaseCommand answer = c.next();
        while (answer.getType() == BaseCommand.Type.ACTIVE_CONSUMER_CHANGE) { // a Failover subscription's notice
            answer = c.next();
        }
        switch (answer.getType()) {
            case SUCCESS:
                assertEquals(answer.getSuccess().getRequestId(), id);
                return "SUCCESS";
            case ERROR:
                assertEquals(answer.getError().getRequestId(), id);
                return "ERROR " + answer.getError().getError();
            default:
                throw new AssertionError("unexpected answer to subscribe " + id + ": " + answer.getType());
        }
    }
}
