package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;

import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastDispatcher;
import java.time.Duration;
import java.util.List;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.impl.MessageIdImpl;
import org.apache.pulsar.common.policies.data.BacklogQuota;
import org.testng.annotations.Test;

/**
 * design.md, "The virtual cursor" (acks) and "Delivery guarantees": cumulative and individual acks; the durable
 * mark-delete position is the lowest acknowledged position
 * of all consumers; retention and backlog quotas still apply, and laggards that the quota evicts move forward.
 */
public class BroadcastAckTest extends BroadcastTestBase {

    @Override
    protected void configureBroker(ServiceConfiguration conf) {
        conf.getProperties().setProperty("broadcastMarkDeleteIntervalMs", "100");
        conf.setBacklogQuotaCheckIntervalInSeconds(1);
    }

    protected PositionImpl markDeleted(String topic) {
        return (PositionImpl) brokerSubscription(topic, "fleet").getCursor().getMarkDeletedPosition();
    }

    protected static PositionImpl position(MessageId id) {
        MessageIdImpl m = (MessageIdImpl) id;
        return PositionImpl.get(m.getLedgerId(), m.getEntryId());
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void markDeleteFollowsTheSlowestConsumer() throws Exception {
        String topic = newTopic("slowest");
        Consumer<String> fast = broadcastConsumer(topic, "fleet", "fast");
        Consumer<String> middle = broadcastConsumer(topic, "fleet", "middle");
        Consumer<String> slow = broadcastConsumer(topic, "fleet", "slow");
        try (Producer<String> producer = producer(topic)) {
            publish(producer, "m", 10);
            PositionImpl start = markDeleted(topic);
            List<Message<String>> fastMsgs = take(fast, 10);
            List<Message<String>> middleMsgs = take(middle, 10);
            List<Message<String>> slowMsgs = take(slow, 10);

            fast.acknowledgeCumulative(fastMsgs.get(9).getMessageId());
            for (int i = 0; i < 5; i++) {
                middle.acknowledge(middleMsgs.get(i).getMessageId());
            }
            // The slow consumer has acknowledged nothing: storage keeps everything for it.
            await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5))
                    .until(() -> markDeleted(topic).equals(start));
            assertEquals(cluster.admin().topics().getStats(topic).getSubscriptions().get("fleet").getMsgBacklog(),
                    10);

            slow.acknowledgeCumulative(slowMsgs.get(9).getMessageId());
            PositionImpl middleAck = position(middleMsgs.get(4).getMessageId());
            await().atMost(Duration.ofSeconds(10)).until(() -> markDeleted(topic).equals(middleAck));

            // Individual acks out of order: the gap closes last.
            for (int i = 9; i >= 5; i--) {
                middle.acknowledge(middleMsgs.get(i).getMessageId());
            }
            PositionImpl last = position(fastMsgs.get(9).getMessageId());
            await().atMost(Duration.ofSeconds(10)).until(() -> markDeleted(topic).equals(last));
            await().atMost(Duration.ofSeconds(10)).until(() -> cluster.admin().topics().getStats(topic)
                    .getSubscriptions().get("fleet").getMsgBacklog() == 0);
        } finally {
            closeAll(List.of(fast, middle, slow));
        }
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void backlogQuotaEvictionMovesLaggardsForward() throws Exception {
        String namespace = "public/eviction-" + System.nanoTime();
        cluster.admin().namespaces().createNamespace(namespace, java.util.Set.of(cluster.clusterName()));
        cluster.admin().namespaces().setBacklogQuota(namespace, BacklogQuota.builder()
                .limitSize(20 * 1024).retentionPolicy(BacklogQuota.RetentionPolicy.consumer_backlog_eviction)
                .build());
        String topic = "persistent://" + namespace + "/evict";
        Consumer<String> active = broadcastConsumer(topic, "fleet", "active");
        Consumer<String> laggard = broadcastConsumer(topic, "fleet", "laggard");
        try (Producer<String> producer = producer(topic)) {
            String kb = "x".repeat(1024);
            MessageId lastId = null;
            for (int i = 0; i < 100; i++) {
                lastId = producer.send(kb + i);
            }
            for (Message<String> m : take(active, 100)) {
                active.acknowledge(m);
            }
            // The laggard never acks. The quota check drops the backlog; the laggard's virtual cursor follows.
            BroadcastDispatcher dispatcher = dispatcher(topic, "fleet");
            await().atMost(Duration.ofSeconds(30)).until(() -> dispatcher.counters().consumersSkippedForward() > 0);
            PositionImpl evictedTo = markDeleted(topic);
            assertTrue(evictedTo.compareTo(position(lastId)) <= 0);
            org.apache.pulsar.broker.service.Consumer brokerLaggard = brokerSubscription(topic, "fleet")
                    .getConsumers().stream().filter(c -> c.consumerName().equals("laggard")).findFirst()
                    .orElseThrow();
            assertTrue(dispatcher.member(brokerLaggard).cursor().acknowledged().compareTo(evictedTo) >= 0);
        } finally {
            closeAll(List.of(active, laggard));
        }
    }
}
