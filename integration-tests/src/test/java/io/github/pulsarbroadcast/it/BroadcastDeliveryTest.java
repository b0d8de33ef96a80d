package io.github.pulsarbroadcast.it;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertNotNull;
import static org.testng.Assert.assertTrue;
import static org.testng.Assert.expectThrows;

import io.github.pulsarbroadcast.broadcast.BroadcastMode;
import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastDispatcher;
import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastSubscription;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionType;
import org.apache.pulsar.common.policies.data.DispatchRate;
import org.testng.annotations.Test;

/** design.md, "Delivery guarantees" (order, every message) and "The dispatcher" (tail read): every consumer gets
 * every message, in order and unchanged; each entry is read once. */
public class BroadcastDeliveryTest extends BroadcastTestBase {

    /** Small enough that a 50 KB message is chunked (2.10 clients chunk above the broker's maximum). */
    private static final int MAX_MESSAGE_SIZE = 16 * 1024;

    @Override
    protected void configureBroker(org.apache.pulsar.broker.ServiceConfiguration conf) {
        conf.setMaxMessageSize(MAX_MESSAGE_SIZE);
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void everyConsumerReceivesEveryMessageInOrder() throws Exception {
        String topic = newTopic("every");
        List<Consumer<String>> consumers = broadcastConsumers(topic, "fleet", 10);
        try (Producer<String> producer = producer(topic)) {
            List<String> sent = publish(producer, "alert", 100);
            assertEveryoneReceives(consumers, sent);
        } finally {
            closeAll(consumers);
        }
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void messagesArriveUnchanged() throws Exception {
        String topic = newTopic("unchanged");
        List<Consumer<String>> consumers = broadcastConsumers(topic, "fleet", 3);
        try (Producer<String> producer = producer(topic)) {
            for (int i = 0; i < 5; i++) {
                producer.newMessage().key("road-" + i).value("damage-" + i).property("severity", "s" + i)
                        .eventTime(1_000_000L + i).send();
            }
            for (Consumer<String> c : consumers) {
                for (int i = 0; i < 5; i++) {
                    Message<String> m = c.receive(30, TimeUnit.SECONDS);
                    assertNotNull(m);
                    assertEquals(m.getValue(), "damage-" + i);
                    assertEquals(m.getKey(), "road-" + i);
                    assertEquals(m.getProperty("severity"), "s" + i);
                    assertEquals(m.getEventTime(), 1_000_000L + i);
                    c.acknowledge(m);
                }
            }
        } finally {
            closeAll(consumers);
        }
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void batchedMessagesArriveIntactAndInOrder() throws Exception {
        String topic = newTopic("batched");
        List<Consumer<String>> consumers = broadcastConsumers(topic, "fleet", 3);
        try (Producer<String> producer = client.newProducer(Schema.STRING).topic(topic).enableBatching(true)
                .batchingMaxMessages(10).batchingMaxPublishDelay(50, TimeUnit.MILLISECONDS).create()) {
            List<String> sent = new ArrayList<>();
            for (int i = 0; i < 95; i++) {
                String v = "batched-" + i;
                producer.sendAsync(v);
                sent.add(v);
            }
            producer.flush();
            assertEveryoneReceives(consumers, sent);
        } finally {
            closeAll(consumers);
        }
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void chunkedMessagesArriveWhole() throws Exception {
        String topic = newTopic("chunked");
        List<Consumer<String>> consumers = broadcastConsumers(topic, "fleet", 3);
        try (Producer<String> producer = client.newProducer(Schema.STRING).topic(topic).enableBatching(false)
                .enableChunking(true).create()) {
            String big = "x".repeat(50_000) + "-end";
            producer.send(big);
            producer.send("small");
            for (Consumer<String> c : consumers) {
                assertEquals(receive(c, 2), List.of(big, "small"));
            }
        } finally {
            closeAll(consumers);
        }
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void eachEntryIsReadOnceForAllConsumers() throws Exception {
        String topic = newTopic("read-once");
        List<Consumer<String>> consumers = broadcastConsumers(topic, "fleet", 20);
        try (Producer<String> producer = producer(topic)) {
            List<String> sent = publish(producer, "m", 50);
            assertEveryoneReceives(consumers, sent);
            BroadcastDispatcher dispatcher = dispatcher(topic, "fleet");
            assertEquals(dispatcher.counters().tailEntriesRead(), 50, "entries read at the tail");
            assertEquals(dispatcher.counters().catchUpEntriesRead(), 0, "entries read again for consumers behind");
            assertEquals(dispatcher.getConsumers().size(), 20);
        } finally {
            closeAll(consumers);
        }
    }

    @Test(groups = "integration", timeOut = 60_000)
    public void subscriptionIsStoredAsBroadcast() throws Exception {
        String topic = newTopic("stored");
        try (Consumer<String> c = broadcastConsumer(topic, "fleet", "only")) {
            assertTrue(brokerSubscription(topic, "fleet") instanceof BroadcastSubscription);
            Map<String, String> props = cluster.admin().topics().getStats(topic).getSubscriptions().get("fleet")
                    .getSubscriptionProperties();
            assertEquals(props.get(BroadcastMode.KEY), BroadcastMode.BROADCAST);
        }
    }

    /**
     * usage.md: a client that can send only the consumer property (Python, C++) creates a broadcast subscription,
     * and the broker stores the subscription property itself, so that the subscription stays broadcast once nobody
     * is connected (a plain consumer is then refused).
     */
    @Test(groups = "integration", timeOut = 60_000)
    public void theConsumerPropertyAloneStoresTheSubscriptionProperty() throws Exception {
        String topic = newTopic("consumer-property-only");
        try (Consumer<String> c = client.newConsumer(Schema.STRING).topic(topic).subscriptionName("fleet")
                .subscriptionType(SubscriptionType.Failover).consumerName("only")
                .property(BroadcastMode.KEY, BroadcastMode.BROADCAST).subscribe()) {
            assertTrue(brokerSubscription(topic, "fleet") instanceof BroadcastSubscription);
        }
        cluster.admin().topics().unload(topic);
        Map<String, String> props = cluster.admin().topics().getStats(topic).getSubscriptions().get("fleet")
                .getSubscriptionProperties();
        assertEquals(props.get(BroadcastMode.KEY), BroadcastMode.BROADCAST, "stored: " + props);
        PulsarClientException.NotAllowedException plain = expectThrows(
                PulsarClientException.NotAllowedException.class, () -> client.newConsumer(Schema.STRING)
                        .topic(topic).subscriptionName("fleet").subscriptionType(SubscriptionType.Failover)
                        .consumerName("plain").subscribe());
        assertTrue(plain.getMessage().contains("is a broadcast subscription"), plain.getMessage());
    }

    /**
     * design.md, "Not supported on a broadcast subscription": delayed delivery and the namespace's subscription
     * dispatch rate are not applied: a message to be delivered in an hour, and five messages under a limit of one
     * message a minute, reach the broadcast consumer as soon as they are written, while a stock subscription of the
     * topic is held by the limit.
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void delayedDeliveryAndDispatchRatesAreNotApplied() throws Exception {
        String namespace = "public/no-limits-" + java.util.UUID.randomUUID().toString().substring(0, 8);
        cluster.admin().namespaces().createNamespace(namespace, java.util.Set.of(cluster.clusterName()));
        cluster.admin().namespaces().setSubscriptionDispatchRate(namespace, DispatchRate.builder()
                .dispatchThrottlingRateInMsg(1).dispatchThrottlingRateInByte(-1).ratePeriodInSecond(60).build());
        String topic = "persistent://" + namespace + "/t";
        Consumer<String> car = closeAfterTest(broadcastConsumer(topic, "fleet", "car"));
        // The control: a stock subscription of the topic, which the rate limits.
        Consumer<String> stock = closeAfterTest(client.newConsumer(Schema.STRING).topic(topic)
                .subscriptionName("stock").subscriptionType(SubscriptionType.Failover).subscribe());
        List<String> sent = new ArrayList<>();
        try (Producer<String> producer = producer(topic)) {
            producer.newMessage().value("in-an-hour").deliverAfter(1, TimeUnit.HOURS).send();
            sent.add("in-an-hour");
            sent.addAll(publish(producer, "m", 5));
        }
        assertEquals(receive(car, 6), sent);
        int stockGot = 0;
        while (stock.receive(3, TimeUnit.SECONDS) != null) {
            stockGot++;
        }
        assertTrue(stockGot < 6, "the limit is in force for the stock subscription: it got " + stockGot);
    }
}
