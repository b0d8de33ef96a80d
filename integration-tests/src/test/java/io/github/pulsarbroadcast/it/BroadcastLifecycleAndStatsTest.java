package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertNotNull;
import static org.testng.Assert.assertTrue;
import static org.testng.Assert.expectThrows;

import io.github.pulsarbroadcast.broadcast.BroadcastMode;
import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastDispatcher;
import java.time.Duration;
import java.util.List;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.common.policies.data.ConsumerStats;
import org.apache.pulsar.common.policies.data.SubscriptionStats;
import org.apache.pulsar.common.policies.data.TopicStats;
import org.testng.annotations.Test;

/**
 * design.md, "The broadcast subscription" (consumer close, unsubscribe, subscription delete and topic delete free
 * all state) and what an
 * operator sees in {@code pulsar-admin topics stats}.
 */
public class BroadcastLifecycleAndStatsTest extends BroadcastTestBase {

    @Override
    protected void configureBroker(ServiceConfiguration conf) {
        conf.getProperties().setProperty("broadcastReconnectGraceSeconds", "1");
        conf.getProperties().setProperty("broadcastConsumerRetentionSeconds", "1");
        conf.getProperties().setProperty("broadcastMarkDeleteIntervalMs", "100");
        conf.getProperties().setProperty("broadcastStatsIntervalMs", "100");
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void closingConsumersFreesTheirStateAfterTheirRetention() throws Exception {
        String topic = newTopic("close");
        List<Consumer<String>> consumers = broadcastConsumers(topic, "fleet", 3);
        BroadcastDispatcher dispatcher = dispatcher(topic, "fleet");
        assertEquals(dispatcher.getConsumers().size(), 3);
        closeAll(consumers);
        assertTrue(dispatcher.getConsumers().isEmpty());
        // Their virtual cursors are kept for a reconnect (at least the one closed last, milliseconds ago, within the
        // 1-s retention: the check that they are kept was missing, a read-only audit of the tests, forty-sixth
        // session), then dropped.
        assertTrue(dispatcher.parkedCount() > 0, "kept for a reconnect");
        await().atMost(Duration.ofSeconds(10)).until(() -> dispatcher.parkedCount() == 0);
        assertEquals(brokerTopic(topic).getNumberOfConsumers(), 0);
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void soleConsumerUnsubscribeDeletesTheSubscription() throws Exception {
        String topic = newTopic("unsubscribe");
        Consumer<String> only = broadcastConsumer(topic, "fleet", "only");
        BroadcastDispatcher dispatcher = dispatcher(topic, "fleet");
        only.unsubscribe();
        assertFalse(brokerTopic(topic).getSubscriptions().containsKey("fleet"));
        assertTrue(dispatcher.isClosed());
        assertEquals(dispatcher.parkedCount(), 0);
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void unsubscribeWhileOthersAreConnectedIsRefusedAndLosesNothing() throws Exception {
        String topic = newTopic("unsubscribe-busy");
        List<Consumer<String>> consumers = broadcastConsumers(topic, "fleet", 2);
        try (Producer<String> producer = producer(topic)) {
            expectThrows(PulsarClientException.class, () -> consumers.get(0).unsubscribe());
            assertTrue(brokerTopic(topic).getSubscriptions().containsKey("fleet"));
            assertEveryoneReceives(consumers, publish(producer, "m", 5));
        } finally {
            closeAll(consumers);
        }
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void deletingTheSubscriptionClosesItsDispatcher() throws Exception {
        String topic = newTopic("delete-sub");
        List<Consumer<String>> consumers = broadcastConsumers(topic, "fleet", 2);
        BroadcastDispatcher dispatcher = dispatcher(topic, "fleet");
        closeAll(consumers);
        cluster.admin().topics().deleteSubscription(topic, "fleet");
        assertFalse(brokerTopic(topic).getSubscriptions().containsKey("fleet"));
        assertTrue(dispatcher.isClosed());
        assertTrue(dispatcher.getConsumers().isEmpty());
        assertEquals(dispatcher.parkedCount(), 0, "a deleted subscription keeps no cursors for reconnects");
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void deletingTheTopicFreesEverything() throws Exception {
        String topic = newTopic("delete-topic");
        List<Consumer<String>> consumers = broadcastConsumers(topic, "fleet", 2);
        BroadcastDispatcher dispatcher = dispatcher(topic, "fleet");
        closeAll(consumers);
        cluster.admin().topics().delete(topic, true);
        assertTrue(dispatcher.isClosed());
        assertTrue(dispatcher.getConsumers().isEmpty());
        assertFalse(cluster.broker().getBrokerService().getTopicReference(topic).isPresent());
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void topicStatsShowTheSubscriptionItsConsumersAndCounters() throws Exception {
        String topic = newTopic("stats");
        List<Consumer<String>> consumers = broadcastConsumers(topic, "fleet", 3);
        try (Producer<String> producer = producer(topic)) {
            assertEveryoneReceives(consumers, publish(producer, "m", 7));
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                SubscriptionStats sub = cluster.admin().topics().getStats(topic).getSubscriptions().get("fleet");
                return sub.getMsgOutCounter() == 21 && sub.getMsgBacklog() == 0;
            });
            TopicStats stats = cluster.admin().topics().getStats(topic);
            SubscriptionStats sub = stats.getSubscriptions().get("fleet");
            assertEquals(sub.getSubscriptionProperties().get(BroadcastMode.KEY), BroadcastMode.BROADCAST);
            assertEquals(sub.getType(), "Failover");
            assertEquals(sub.getConsumers().size(), 3);
            for (ConsumerStats c : sub.getConsumers()) {
                assertNotNull(c.getConsumerName());
                assertEquals(c.getMsgOutCounter(), 7, c.getConsumerName());
                assertTrue(c.getBytesOutCounter() > 0);
                assertTrue(c.getAvailablePermits() > 0);
            }
            assertEquals(stats.getMsgInCounter(), 7);
        } finally {
            closeAll(consumers);
        }
    }
}
