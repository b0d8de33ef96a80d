package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertNull;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.impl.MessageIdImpl;
import org.testng.annotations.Test;

/**
 * design.md, "The virtual cursor" (leave) and "Delivery guarantees": a consumer that reconnects with the same name
 * within the grace period continues from its virtual
 * cursor; after a topic unload every consumer resumes at or before its last acknowledged position.
 */
public class BroadcastReconnectTest extends BroadcastTestBase {

    @Override
    protected void configureBroker(ServiceConfiguration conf) {
        conf.getProperties().setProperty("broadcastMarkDeleteIntervalMs", "100");
    }

    /** Receives until nothing more arrives for a second. */
    static List<String> drain(Consumer<String> c) throws Exception {
        List<String> values = new ArrayList<>();
        for (Message<String> m = c.receive(5, TimeUnit.SECONDS); m != null; m = c.receive(1, TimeUnit.SECONDS)) {
            values.add(m.getValue());
            c.acknowledge(m);
        }
        return values;
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void reconnectWithTheSameNameContinuesFromItsVirtualCursor() throws Exception {
        String topic = newTopic("grace");
        Consumer<String> keeper = broadcastConsumer(topic, "fleet", "keeper");
        Consumer<String> a = broadcastConsumer(topic, "fleet", "a");
        try (Producer<String> producer = producer(topic)) {
            List<String> sent = new ArrayList<>(publish(producer, "m", 10));
            assertEquals(values(takeAndAck(a, 10, 4)), sent);
            a.close();
            sent.addAll(publish(producer, "n", 5));
            // Same name, within the grace period: everything after what it acknowledged, nothing more.
            try (Consumer<String> again = broadcastConsumer(topic, "fleet", "a")) {
                assertEquals(drain(again), sent.subList(4, sent.size()));
            }
            // A new name joins at the tail.
            try (Consumer<String> fresh = broadcastConsumer(topic, "fleet", "fresh")) {
                assertNull(fresh.receive(1, TimeUnit.SECONDS));
            }
        } finally {
            keeper.close();
        }
    }

    @Test(groups = "integration", timeOut = 180_000)
    public void topicUnloadLosesNothing() throws Exception {
        String topic = newTopic("unload");
        Consumer<String> ahead = broadcastConsumer(topic, "fleet", "ahead");
        Consumer<String> behind = broadcastConsumer(topic, "fleet", "behind");
        try (Producer<String> producer = producer(topic)) {
            List<String> sent = new ArrayList<>(publish(producer, "m", 10));
            takeAndAck(ahead, 10, 10);
            PositionImpl slowest = position(takeAndAck(behind, 10, 5).get(4));
            await().atMost(Duration.ofSeconds(10)).until(() -> brokerSubscription(topic, "fleet").getCursor()
                    .getMarkDeletedPosition().equals(slowest));

            cluster.admin().topics().unload(topic);
            sent.addAll(publish(producer, "n", 10));

            // Both resume at the subscription's mark-delete position (the slowest consumer's ack): the consumer that
            // was ahead sees again what lies between the slowest ack and its own (5 here), nothing is lost.
            ResumeChecks.assertResumedWithoutLoss(sent, 10, drain(ahead), 5);
            ResumeChecks.assertResumedWithoutLoss(sent, 5, drain(behind), 0);
        } finally {
            closeAll(List.of(ahead, behind));
        }
    }

    static PositionImpl position(Message<?> m) {
        MessageIdImpl id = (MessageIdImpl) m.getMessageId();
        return PositionImpl.get(id.getLedgerId(), id.getEntryId());
    }

    /**
     * Loaded again, the subscription's tail read starts where the first consumer waiting at the tail is, not at the
     * slowest kept position: with a consumer away 2,000 entries behind (its position kept), every consumer at the tail
     * waited after a reload while the tail read went through those 2,000 entries before the next message (regression,
     * thirty-eighth session: 2,001 entries read at the tail; 10 s for 50,000 entries of 1 KB). The one away still
     * gets everything, from catch-up reads, when it is back.
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void afterAReloadTheTailReadSkipsTheBacklogOfAConsumerAway() throws Exception {
        String topic = newTopic("reload-tail");
        broadcastConsumer(topic, "fleet", "away").close();
        Consumer<String> live = closeAfterTest(broadcastConsumer(topic, "fleet", "live"));
        try (Producer<String> producer = producer(topic)) {
            List<String> sent = new ArrayList<>(publish(producer, "m", 2000));
            assertEquals(receive(live, 2000), sent, "live");
            await().pollDelay(Duration.ofMillis(500)).until(() -> true); // its grouped acknowledgements applied
            cluster.admin().topics().unload(topic);
            sent.addAll(publish(producer, "after", 1));
            List<String> again = new ArrayList<>();
            for (Message<String> m = live.receive(30, TimeUnit.SECONDS); !m.getValue().equals("after-0");
                    m = live.receive(30, TimeUnit.SECONDS)) {
                again.add(m.getValue());
                live.acknowledge(m);
            }
            String body = Scrapes.get(cluster.webServiceUrl(), "/metrics/");
            double tailRead = Scrapes.sample(body, "pulsar_broadcast_tail_entries_read_total",
                    "topic=\"" + topic + "\",subscription=\"fleet\"");
            assertEquals(tailRead, again.size() + 1.0, "entries read at the tail since the load: what live had not"
                    + " acknowledged, then after-0");
            Consumer<String> away = closeAfterTest(broadcastConsumer(topic, "fleet", "away"));
            assertEquals(receive(away, 2001), sent, "away");
        }
    }
}
