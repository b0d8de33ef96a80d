package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertTrue;
import static org.testng.Assert.expectThrows;

import io.github.pulsarbroadcast.broadcast.BroadcastMode;
import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastSubscription;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.PulsarClientException.ConsumerBusyException;
import org.apache.pulsar.client.api.PulsarClientException.NotAllowedException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionType;
import org.testng.Assert.ThrowingRunnable;
import org.testng.annotations.Test;

/**
 * Bad input from clients: every mistake gets a clear error that names what is wrong and what is allowed, and costs
 * the consumers already on the subscription nothing (they still get every message, and the subscription's cursor
 * never moves past what they have acknowledged). Bad acknowledgements are {@link BroadcastBadAcksTest}'s.
 *
 * <p>Threading: TestNG's test thread only.
 */
public class BroadcastBadInputTest extends BroadcastTestBase {

    private static final String KEY_VALUE = BroadcastMode.KEY + "=" + BroadcastMode.BROADCAST;

    // ----- who may join which subscription -----

    @Test(groups = "integration", timeOut = 120_000)
    public void plainConsumersAreRefusedOnABroadcastSubscription() throws Exception {
        String topic = newTopic("plain-on-broadcast");
        List<Consumer<String>> fleet = broadcastConsumers(topic, "fleet", 2);
        try (Producer<String> producer = producer(topic)) {
            List<String> expected = new ArrayList<>(publish(producer, "before", 5));
            for (SubscriptionType type : List.of(SubscriptionType.Failover, SubscriptionType.Exclusive)) {
                assertRefused(NotAllowedException.class, () -> client.newConsumer(Schema.STRING).topic(topic)
                        .subscriptionName("fleet").subscriptionType(type).consumerName("plain-" + type)
                        .subscribe(), "fleet", "broadcast subscription", "Failover", KEY_VALUE);
            }
            expected.addAll(publish(producer, "after", 5));
            assertEveryoneReceives(fleet, expected);
            assertTrue(brokerSubscription(topic, "fleet") instanceof BroadcastSubscription);
            assertEquals(dispatcher(topic, "fleet").getConsumers().size(), 2, "consumers of the subscription");
        } finally {
            closeAll(fleet);
        }
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void plainConsumerIsRefusedOnABroadcastSubscriptionWithNobodyConnected() throws Exception {
        String topic = newTopic("plain-on-idle-broadcast");
        broadcastConsumer(topic, "fleet", "gone").close();
        assertRefused(NotAllowedException.class, () -> client.newConsumer(Schema.STRING).topic(topic)
                .subscriptionName("fleet").subscriptionType(SubscriptionType.Failover).subscribe(),
                "broadcast subscription", KEY_VALUE);
        assertTrue(brokerSubscription(topic, "fleet") instanceof BroadcastSubscription,
                "the subscription was replaced: " + brokerSubscription(topic, "fleet"));
        // And a broadcast consumer still joins it.
        try (Consumer<String> back = broadcastConsumer(topic, "fleet", "back");
             Producer<String> producer = producer(topic)) {
            List<String> sent = publish(producer, "m", 3);
            assertEquals(receive(back, 3), sent);
        }
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void broadcastConsumerIsRefusedOnAPlainSubscription() throws Exception {
        String topic = newTopic("broadcast-on-plain");
        try (Consumer<String> stock = client.newConsumer(Schema.STRING).topic(topic).subscriptionName("plain")
                .subscriptionType(SubscriptionType.Exclusive).consumerName("stock").subscribe();
             Producer<String> producer = producer(topic)) {
            List<String> expected = new ArrayList<>(publish(producer, "before", 5));
            assertRefused(NotAllowedException.class, () -> broadcastConsumer(topic, "plain", "intruder"),
                    "'plain'", "not a broadcast subscription", BroadcastMode.KEY);
            expected.addAll(publish(producer, "after", 5));
            assertEquals(receive(stock, expected.size()), expected);
            assertFalse(brokerSubscription(topic, "plain") instanceof BroadcastSubscription);
            assertFalse(brokerSubscription(topic, "plain").getSubscriptionProperties()
                    .containsKey(BroadcastMode.KEY), "the plain subscription was marked broadcast");
        }
        // Also when its consumer has gone: it stays a plain subscription.
        assertRefused(NotAllowedException.class, () -> broadcastConsumer(topic, "plain", "intruder"),
                "not a broadcast subscription");
        assertFalse(brokerSubscription(topic, "plain") instanceof BroadcastSubscription);
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void broadcastKeyNeedsFailover() throws Exception {
        String topic = newTopic("wrong-type");
        List<Consumer<String>> fleet = broadcastConsumers(topic, "fleet", 2);
        try (Producer<String> producer = producer(topic)) {
            List<String> expected = new ArrayList<>(publish(producer, "before", 5));
            for (SubscriptionType type : List.of(SubscriptionType.Shared, SubscriptionType.Key_Shared,
                    SubscriptionType.Exclusive)) {
                for (String subscription : List.of("fleet", "new-" + type)) {
                    assertRefused(NotAllowedException.class, () -> Broadcast.configure(
                            client.newConsumer(Schema.STRING)).subscriptionType(type).topic(topic)
                            .subscriptionName(subscription).consumerName("wrong-" + type).subscribe(),
                            KEY_VALUE, "Failover", type.name());
                }
                assertFalse(subscriptions(topic).contains("new-" + type), "refused subscribe created a subscription");
            }
            expected.addAll(publish(producer, "after", 5));
            assertEveryoneReceives(fleet, expected);
            assertEquals(dispatcher(topic, "fleet").getConsumers().size(), 2);
        } finally {
            closeAll(fleet);
        }
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void consumerNamesAreUniqueWithinASubscription() throws Exception {
        String topic = newTopic("same-name");
        PulsarClient otherClient = newClient();
        try (Consumer<String> first = broadcastConsumer(topic, "fleet", "vehicle-1");
             Producer<String> producer = producer(topic)) {
            List<String> expected = new ArrayList<>(publish(producer, "before", 5));
            // From the same connection and from another one.
            assertRefused(ConsumerBusyException.class, () -> broadcastConsumer(topic, "fleet", "vehicle-1"),
                    "vehicle-1", "unique");
            assertRefused(ConsumerBusyException.class, () -> Broadcast.configure(otherClient.newConsumer(
                    Schema.STRING)).topic(topic).subscriptionName("fleet").consumerName("vehicle-1").subscribe(),
                    "vehicle-1", "unique");
            expected.addAll(publish(producer, "after", 5));
            assertEquals(receive(first, expected.size()), expected);
            assertEquals(dispatcher(topic, "fleet").getConsumers().size(), 1);
            assertTrue(first.isConnected());
        } finally {
            otherClient.close();
        }
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void unknownModeIsRefusedNamingTheAllowedValue() throws Exception {
        String topic = newTopic("multicast");
        List<Consumer<String>> fleet = broadcastConsumers(topic, "fleet", 1);
        try (Producer<String> producer = producer(topic)) {
            List<String> expected = new ArrayList<>(publish(producer, "before", 3));
            for (String subscription : List.of("fleet", "other")) {
                assertRefused(NotAllowedException.class, () -> client.newConsumer(Schema.STRING).topic(topic)
                        .subscriptionName(subscription).subscriptionType(SubscriptionType.Failover)
                        .subscriptionProperties(Map.of(BroadcastMode.KEY, "multicast")).subscribe(),
                        "Subscription property", BroadcastMode.KEY + "=multicast", "'broadcast'");
                assertRefused(NotAllowedException.class, () -> client.newConsumer(Schema.STRING).topic(topic)
                        .subscriptionName(subscription).subscriptionType(SubscriptionType.Failover)
                        .property(BroadcastMode.KEY, "multicast").subscribe(),
                        "Consumer property", BroadcastMode.KEY + "=multicast", "'broadcast'");
            }
            assertFalse(subscriptions(topic).contains("other"), "refused subscribe created a subscription");
            expected.addAll(publish(producer, "after", 3));
            assertEveryoneReceives(fleet, expected);
        } finally {
            closeAll(fleet);
        }
    }

    @Test(groups = "integration", timeOut = 60_000)
    public void nonPersistentTopicIsRefused() throws Exception {
        String topic = "non-persistent://public/default/np-" + java.util.UUID.randomUUID().toString().substring(0, 8);
        assertRefused(NotAllowedException.class, () -> broadcastConsumer(topic, "fleet", "c0"),
                KEY_VALUE, "persistent topic", "non-persistent");
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void maxConsumersPerSubscriptionIsEnforced() throws Exception {
        String namespace = "public/bad-input-max-consumers";
        cluster.admin().namespaces().createNamespace(namespace, Set.of(cluster.clusterName()));
        cluster.admin().namespaces().setMaxConsumersPerSubscription(namespace, 2);
        String topic = "persistent://" + namespace + "/t-" + java.util.UUID.randomUUID().toString().substring(0, 8);
        List<Consumer<String>> fleet = broadcastConsumers(topic, "fleet", 2);
        List<Consumer<String>> stock = new ArrayList<>();
        try (Producer<String> producer = producer(topic)) {
            await().atMost(Duration.ofSeconds(20)).until(() -> Integer.valueOf(2).equals(
                    brokerTopic(topic).getHierarchyTopicPolicies().getMaxConsumersPerSubscription().get()));
            List<String> expected = new ArrayList<>(publish(producer, "before", 5));
            assertRefused(ConsumerBusyException.class, () -> broadcastConsumer(topic, "fleet", "c2"),
                    "max consumers");
            // A stock Failover subscription gets the same answer.
            for (int i = 0; i < 2; i++) {
                stock.add(client.newConsumer(Schema.STRING).topic(topic).subscriptionName("stock")
                        .subscriptionType(SubscriptionType.Failover).consumerName("s" + i).subscribe());
            }
            assertRefused(ConsumerBusyException.class, () -> client.newConsumer(Schema.STRING).topic(topic)
                    .subscriptionName("stock").subscriptionType(SubscriptionType.Failover).consumerName("s2")
                    .subscribe(), "max consumers");

            expected.addAll(publish(producer, "after", 5));
            assertEveryoneReceives(fleet, expected);
            assertEquals(dispatcher(topic, "fleet").getConsumers().size(), 2);

            // A place freed is a place taken: the limit counts connected consumers.
            fleet.remove(1).close();
            await().atMost(Duration.ofSeconds(20)).until(() -> dispatcher(topic, "fleet").getConsumers().size() == 1);
            fleet.add(broadcastConsumer(topic, "fleet", "c2"));
            assertEquals(dispatcher(topic, "fleet").getConsumers().size(), 2);
        } finally {
            closeAll(fleet);
            closeAll(stock);
        }
    }

    // ----- what a broadcast consumer may not do (usage.md, "Not available") -----

    /**
     * A consumer's seek would move every consumer of the subscription: refused with a message that names the admin
     * call to use instead; nobody is moved, and the consumer keeps receiving.
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void seekIsRefusedAndMovesNobody() throws Exception {
        String topic = newTopic("seek");
        List<Consumer<String>> fleet = broadcastConsumers(topic, "fleet", 2);
        try (Producer<String> producer = producer(topic)) {
            List<String> first = publish(producer, "before", 3);
            assertEveryoneReceives(fleet, first);
            PulsarClientException e = expectThrows(PulsarClientException.class,
                    () -> fleet.get(0).seek(MessageId.earliest));
            assertTrue(e.getMessage().contains("Seek is not supported on a broadcast subscription")
                    && e.getMessage().contains("reset-cursor"), e.getMessage());
            List<String> next = publish(producer, "after", 3);
            assertEveryoneReceives(fleet, next);
        } finally {
            closeAll(fleet);
        }
    }

    @Test(groups = "integration", timeOut = 60_000)
    public void readCompactedIsRefused() throws Exception {
        String topic = newTopic("read-compacted");
        assertRefused(NotAllowedException.class, () -> Broadcast.configure(client.newConsumer(Schema.STRING))
                .topic(topic).subscriptionName("fleet").consumerName("c0").readCompacted(true).subscribe(),
                KEY_VALUE, "readCompacted");
    }

    // ----- helpers -----

    /** Asserts that {@code attempt} fails with {@code type} and a message naming every one of {@code mustName}. */
    private static <E extends PulsarClientException> E assertRefused(Class<E> type, ThrowingRunnable attempt,
                                                                    String... mustName) {
        E e = expectThrows(type, attempt);
        String message = String.valueOf(e.getMessage());
        for (String s : mustName) {
            assertTrue(message.contains(s), "the error does not name '" + s + "': " + message);
        }
        return e;
    }

    private List<String> subscriptions(String topic) throws Exception {
        return cluster.admin().topics().getSubscriptions(topic);
    }
}
