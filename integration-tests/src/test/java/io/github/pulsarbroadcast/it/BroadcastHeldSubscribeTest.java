package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;

import io.github.pulsarbroadcast.broadcast.BroadcastMode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.apache.pulsar.broker.service.Topic;
import org.apache.pulsar.broker.service.persistent.PersistentSubscription;
import org.apache.pulsar.broker.service.persistent.PersistentTopic;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.common.api.proto.BaseCommand;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.apache.pulsar.common.api.proto.CommandSubscribe.SubType;
import org.apache.pulsar.common.protocol.Commands;
import org.testng.annotations.Test;

/**
 * A subscribe that the plugin holds back while it works off the event loop (a broadcast subscription installed, a
 * topic loaded to see whether a subscription is a broadcast one) and that the client closes meanwhile, as the Java
 * client does when its subscribe timed out: nothing is attached, as stock drops a consumer whose creation a close
 * overtook. The SUBSCRIBE and the CLOSE_CONSUMER go out in one write, so that the broker reads the close while the
 * subscribe is held. Both tests failed before the fortieth session's fix (a review found it): the consumer was
 * created after its close and kept its name, or the Exclusive slot, on a connection the client still used.
 *
 * <p>Threading: TestNG's test thread only.
 */
public class BroadcastHeldSubscribeTest extends BroadcastTestBase {

    private static final Duration NOTHING_ATTACHES_FOR = Duration.ofSeconds(2);

    @Test(groups = "integration", timeOut = 120_000)
    public void aFirstBroadcastJoinClosedWhileHeldAttachesNoConsumer() throws Exception {
        String topic = newTopic("held-broadcast");
        cluster.admin().topics().createNonPartitionedTopic(topic);
        try (RawProtocolConnection c = RawProtocolConnection.connected(cluster.serviceUrl())) {
            subscribeAndCloseInOneWrite(c, topic, "fleet", SubType.Failover,
                    Map.of(BroadcastMode.KEY, BroadcastMode.BROADCAST));
            // The subscription is installed (the close does not stop that), its consumer never attaches.
            await().atMost(Duration.ofSeconds(30)).until(() -> subscription(topic, "fleet").isPresent());
            await().during(NOTHING_ATTACHES_FOR).atMost(NOTHING_ATTACHES_FOR.multipliedBy(3)).until(() ->
                    subscription(topic, "fleet").orElseThrow().getConsumers().isEmpty());
        }
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void aStockSubscribeToATopicNotLoadedClosedWhileHeldTakesNoExclusiveSlot() throws Exception {
        String topic = newTopic("held-stock");
        try (Producer<String> producer = producer(topic)) {
            producer.send("first");
        }
        cluster.admin().topics().unload(topic);
        await().atMost(Duration.ofSeconds(30)).until(() -> loaded(topic).isEmpty());
        try (RawProtocolConnection c = RawProtocolConnection.connected(cluster.serviceUrl())) {
            subscribeAndCloseInOneWrite(c, topic, "stock", SubType.Exclusive, Map.of());
            await().atMost(Duration.ofSeconds(30)).until(() -> loaded(topic).isPresent());
            await().during(NOTHING_ATTACHES_FOR).atMost(NOTHING_ATTACHES_FOR.multipliedBy(3)).until(() ->
                    subscription(topic, "stock").map(s -> s.getConsumers().isEmpty()).orElse(true));
            // The slot itself (a read-only audit of the tests, forty-sixth session: the check above also passes before
            // the held subscribe has run): an Exclusive consumer of the subscription is accepted, not busy.
            client.newConsumer(org.apache.pulsar.client.api.Schema.STRING).topic(topic).subscriptionName("stock")
                    .subscriptionType(org.apache.pulsar.client.api.SubscriptionType.Exclusive).subscribe().close();
        }
    }

    /**
     * SUBSCRIBE (consumer 1, request 1) and CLOSE_CONSUMER (consumer 1, request 2) in one write; checks the answer to
     * the close.
     */
    private static void subscribeAndCloseInOneWrite(RawProtocolConnection c, String topic, String subscription,
            SubType type, Map<String, String> properties) throws IOException {
        ByteBuf subscribe = Commands.newSubscribe(topic, subscription, 1, 1, type, 0, "car-1", true, null,
                properties, false, false, InitialPosition.Earliest, 0, null, true, null, properties, 0);
        ByteBuf close = Commands.newCloseConsumer(1, 2);
        c.send(Unpooled.wrappedBuffer(subscribe, close));
        BaseCommand answer = c.next();
        assertEquals(answer.getType(), BaseCommand.Type.SUCCESS, "the close is answered first");
        assertEquals(answer.getSuccess().getRequestId(), 2L);
    }

    private Optional<Topic> loaded(String topic) {
        return cluster.broker().getBrokerService().getTopicReference(topic);
    }

    private Optional<PersistentSubscription> subscription(String topic, String name) {
        return loaded(topic).map(t -> ((PersistentTopic) t).getSubscription(name));
    }
}
