package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertTrue;

import io.github.pulsarbroadcast.broadcast.BroadcastMode;
import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastSubscription;
import io.github.pulsarbroadcast.standalone.EmbeddedPulsar;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.SubscriptionType;
import org.apache.pulsar.common.policies.data.SubscriptionStats;
import org.testng.annotations.Test;

/**
 * Rolling back: the same ZooKeeper and bookies are served by a broker without the plugin, then with it again.
 * Nothing the plugin persisted breaks the stock broker; broadcast consumers there get stock Failover behaviour; when
 * the plugin returns they resume with nothing lost.
 */
public class BroadcastRollbackTest extends BroadcastTestBase {

    @Override
    protected void configureBroker(ServiceConfiguration conf) {
        conf.getProperties().setProperty("broadcastMarkDeleteIntervalMs", "100");
    }

    @Test(groups = "integration", timeOut = 300_000)
    public void stockBrokerServesThePluginsDataAndThePluginResumes() throws Exception {
        String topic = newTopic("rollback");
        Consumer<String> stock = client.newConsumer(org.apache.pulsar.client.api.Schema.STRING).topic(topic)
                .subscriptionName("audit").subscriptionType(SubscriptionType.Exclusive).subscribe();
        Consumer<String> a = broadcastConsumer(topic, "fleet", "a");
        Consumer<String> b = broadcastConsumer(topic, "fleet", "b");
        List<String> sent = new ArrayList<>();
        try (Producer<String> producer = producer(topic)) {
            sent.addAll(publish(producer, "m", 10));
            takeAndAck(a, 10, 10);
            PositionImpl slowest = BroadcastReconnectTest.position(takeAndAck(b, 10, 5).get(4));
            await().atMost(Duration.ofSeconds(10)).until(() -> brokerSubscription(topic, "fleet").getCursor()
                    .getMarkDeletedPosition().equals(slowest));
            a.close();
            b.close();

            // 1. Without the plugin: the broker starts, the data and both subscriptions are intact.
            cluster.restartBroker(0, conf -> conf.setBrokerInterceptors(Collections.emptySet()));
            assertFalse(EmbeddedPulsar.loadsPlugin(cluster.broker().getConfiguration()));
            sent.addAll(publish(producer, "during", 5));
            assertEquals(BroadcastReconnectTest.drain(stock), sent, "the stock subscription lost nothing");
            assertFalse(brokerSubscription(topic, "fleet") instanceof BroadcastSubscription);
            SubscriptionStats fleet = cluster.admin().topics().getStats(topic).getSubscriptions().get("fleet");
            assertEquals(fleet.getSubscriptionProperties().get(BroadcastMode.KEY), BroadcastMode.BROADCAST);
            assertEquals(fleet.getMsgBacklog(), 10, "5 unacknowledged by b, 5 published meanwhile");
            assertStockFailoverBehaviour(topic);

            // 2. The plugin is back: both resume from the slowest acknowledgement, nothing lost.
            cluster.restartBroker(0, conf -> conf.setBrokerInterceptors(Set.of(EmbeddedPulsar.INTERCEPTOR_NAME)));
            try (Consumer<String> a2 = broadcastConsumer(topic, "fleet", "a");
                 Consumer<String> b2 = broadcastConsumer(topic, "fleet", "b")) {
                sent.addAll(publish(producer, "after", 5));
                ResumeChecks.assertResumedWithoutLoss(sent, 10, BroadcastReconnectTest.drain(a2), 5);
                ResumeChecks.assertResumedWithoutLoss(sent, 5, BroadcastReconnectTest.drain(b2), 0);
                assertTrue(brokerSubscription(topic, "fleet") instanceof BroadcastSubscription);
            }
        } finally {
            stock.close();
        }
    }

    /**
     * The plugin loaded but switched off ({@code broadcastEnabled=false}): stock Failover, consumers stay connected.
     * Regression (twenty-sixth session's review): the interceptor's safety net still disconnected every consumer of a
     * broadcast subscription after its subscribe, and the clients reconnected in an endless loop.
     */
    @Test(groups = "integration", timeOut = 300_000)
    public void switchedOffThePluginGivesStockFailoverAndKeepsConsumersConnected() throws Exception {
        String topic = newTopic("switched-off");
        broadcastConsumer(topic, "fleet", "a").close();
        try (Producer<String> producer = producer(topic)) {
            cluster.restartBroker(0, conf -> conf.getProperties().setProperty("broadcastEnabled", "false"));
            assertTrue(EmbeddedPulsar.loadsPlugin(cluster.broker().getConfiguration()), "loaded, switched off");
            publish(producer, "off", 10);
            assertStockFailoverBehaviour(topic, () -> {
                Set<String> since = connectedSince(topic);
                assertEquals(since.size(), 2, "both consumers attached: " + since);
                await("no consumer is disconnected and reconnects").during(Duration.ofSeconds(3))
                        .atMost(Duration.ofSeconds(5)).until(() -> connectedSince(topic).equals(since));
            });
        } finally {
            cluster.restartBroker(0, conf -> conf.getProperties().remove("broadcastEnabled"));
        }
    }

    private Set<String> connectedSince(String topic) throws Exception {
        Set<String> since = new java.util.HashSet<>();
        cluster.admin().topics().getStats(topic).getSubscriptions().get("fleet").getConsumers()
                .forEach(c -> since.add(c.getConsumerName() + "@" + c.getConnectedSince()));
        return since;
    }

    /** On a stock broker, broadcast consumers are plain Failover consumers: one of them receives. No acks here. */
    private void assertStockFailoverBehaviour(String topic) throws Exception {
        assertStockFailoverBehaviour(topic, () -> { });
    }

    /** As above; {@code whileConnected} runs once both consumers have received. */
    private void assertStockFailoverBehaviour(String topic, ThrowingRunnable whileConnected) throws Exception {
        try (Consumer<String> x = broadcastConsumer(topic, "fleet", "x");
             Consumer<String> y = broadcastConsumer(topic, "fleet", "y")) {
            int gotX = count(x);
            int gotY = count(y);
            assertTrue(gotX == 0 ^ gotY == 0, "exactly one active consumer: " + gotX + "/" + gotY);
            assertEquals(Math.max(gotX, gotY), 10);
            whileConnected.run();
        }
    }

    private interface ThrowingRunnable {
        void run() throws Exception;
    }

    private static int count(Consumer<String> c) throws Exception {
        int n = 0;
        for (Message<String> m = c.receive(3, TimeUnit.SECONDS); m != null; m = c.receive(1, TimeUnit.SECONDS)) {
            n++;
        }
        return n;
    }
}
