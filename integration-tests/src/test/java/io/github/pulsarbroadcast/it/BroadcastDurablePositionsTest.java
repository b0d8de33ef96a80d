package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertTrue;

import io.github.pulsarbroadcast.broadcast.positions.PositionNodes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.common.naming.TopicName;
import org.apache.pulsar.common.util.Codec;
import org.apache.pulsar.metadata.api.MetadataStore;
import org.testng.annotations.Test;

/**
 * design.md, "Durable consumer positions" (issue 13), on one real broker: a consumer away longer than the reconnect
 * grace (but within its retention) resumes exactly, across a topic reload; an expired position stops holding the
 * backlog; deleting the subscription or the topic removes the saved positions; and saved positions that are lost
 * fall back to the mark-delete position without loss. Grace 2 s, retention 6 s, positions saved every 200 ms.
 */
public class BroadcastDurablePositionsTest extends BroadcastTestBase {

    private static final int GRACE_SECONDS = 2;
    private static final int RETENTION_SECONDS = 6;

    @Override
    protected void configureBroker(ServiceConfiguration conf) {
        conf.getProperties().setProperty("broadcastMarkDeleteIntervalMs", "100");
        conf.getProperties().setProperty("broadcastPositionSyncIntervalMs", "200");
        conf.getProperties().setProperty("broadcastReconnectGraceSeconds", Integer.toString(GRACE_SECONDS));
        conf.getProperties().setProperty("broadcastConsumerRetentionSeconds", Integer.toString(RETENTION_SECONDS));
    }

    private MetadataStore metadata() {
        return cluster.broker().getLocalMetadataStore();
    }

    static String savedPath(String topic, String subscription) {
        return PositionNodes.ROOT + "/" + TopicName.get(topic).getPersistenceNamingEncoding() + "/"
                + Codec.encode(subscription);
    }

    private static void waitLongerThan(int seconds) {
        await().pollDelay(Duration.ofMillis(seconds * 1000L + 500)).atMost(Duration.ofSeconds(seconds + 5))
                .until(() -> true);
    }

    /** Before issue 13 the consumer came back after the grace at the tail and never got m10..m19. */
    @Test(groups = "integration", timeOut = 120_000)
    public void aConsumerAwayLongerThanTheGraceResumesExactlyAcrossAReload() throws Exception {
        String topic = newTopic("away");
        Consumer<String> a = broadcastConsumer(topic, "fleet", "parked-car");
        try (Producer<String> producer = producer(topic)) {
            List<String> sent = new ArrayList<>(publish(producer, "m", 10));
            assertEquals(receive(a, 10), sent);
            a.close();
            sent.addAll(publish(producer, "m2", 10));
            cluster.admin().topics().unload(topic);
            waitLongerThan(GRACE_SECONDS);
            Consumer<String> back = broadcastConsumer(topic, "fleet", "parked-car");
            try {
                assertEquals(BroadcastReconnectTest.drain(back), sent.subList(10, 20), "exactly what it missed");
            } finally {
                back.close();
            }
        }
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void anExpiredPositionStopsHoldingTheBacklog() throws Exception {
        String topic = newTopic("expiry");
        Consumer<String> leaver = broadcastConsumer(topic, "fleet", "leaver");
        Consumer<String> stayer = broadcastConsumer(topic, "fleet", "stayer");
        try (Producer<String> producer = producer(topic)) {
            List<String> sent = publish(producer, "m", 10);
            takeAndAck(leaver, 10, 5);
            assertEquals(receive(stayer, 10), sent);
            leaver.close();
            await().atMost(Duration.ofSeconds(10)).until(() -> backlog(topic) == 5);
            // Still held after the grace (the retention is longer), gone after the retention.
            waitLongerThan(GRACE_SECONDS);
            assertEquals(backlog(topic), 5, "the retained position holds the backlog");
            await().atMost(Duration.ofSeconds(RETENTION_SECONDS + 10)).until(() -> backlog(topic) == 0);
            assertEquals(dispatcher(topic, "fleet").counters().retainedExpired(), 1L, "the expiry is counted");
            // Back after its retention, the name is a new consumer at its initial position (Latest: the tail).
            Consumer<String> back = closeAfterTest(broadcastConsumer(topic, "fleet", "leaver"));
            List<String> after = publish(producer, "n", 2);
            assertEquals(receive(back, 2), after, "only what was published after it came back");
        } finally {
            stayer.close();
        }
    }

    private long backlog(String topic) throws Exception {
        return cluster.admin().topics().getStats(topic).getSubscriptions().get("fleet").getMsgBacklog();
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void deletingTheSubscriptionOrTheTopicRemovesTheSavedPositions() throws Exception {
        for (boolean wholeTopic : new boolean[] {false, true}) {
            String topic = newTopic(wholeTopic ? "delete-topic" : "delete-sub");
            Consumer<String> c = broadcastConsumer(topic, "fleet", "car");
            try (Producer<String> producer = producer(topic)) {
                receive(c, publish(producer, "m", 3).size());
            }
            String path = savedPath(topic, "fleet");
            await().atMost(Duration.ofSeconds(10)).until(() -> metadata().exists(path).get());
            c.close();
            if (wholeTopic) {
                cluster.admin().topics().delete(topic, true);
            } else {
                cluster.admin().topics().deleteSubscription(topic, "fleet");
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> !metadata().exists(path).get());
        }
    }

    /** design.md: missing saved positions fall back to the mark-delete position (duplicates). */
    @Test(groups = "integration", timeOut = 120_000)
    public void lostSavedPositionsFallBackWithoutLoss() throws Exception {
        fallBackWithoutLoss("lost-state", path -> {
            metadata().deleteRecursive(path).get();
            assertFalse(metadata().exists(path).get());
        });
    }

    /** design.md: unreadable saved positions (here a head of random bytes) fall back as missing ones do. */
    @Test(groups = "integration", timeOut = 120_000)
    public void unreadableSavedPositionsFallBackWithoutLoss() throws Exception {
        try (LogLines unreadable = LogLines.watch("io.github.pulsarbroadcast",
                "No saved consumer positions (they are unreadable")) {
            fallBackWithoutLoss("garbled-state", path -> {
                byte[] garbage = new byte[64];
                new java.util.Random(7).nextBytes(garbage);
                metadata().put(path, garbage, java.util.Optional.empty()).get();
            });
            assertEquals(unreadable.lines().size(), 1, "read as unreadable, with one warning: " + unreadable.lines());
        }
    }

    /** What a test does to the saved state at {@code path} while the topic is unloaded. */
    private interface StateDamage {
        void apply(String path) throws Exception;
    }

    private void fallBackWithoutLoss(String prefix, StateDamage damage) throws Exception {
        String topic = newTopic(prefix);
        List<Consumer<String>> consumers = broadcastConsumers(topic, "fleet", 3);
        try (Producer<String> producer = producer(topic)) {
            List<String> sent = new ArrayList<>(publish(producer, "m", 10));
            takeAndAck(consumers.get(0), 10, 10);
            takeAndAck(consumers.get(1), 10, 8);
            org.apache.bookkeeper.mledger.impl.PositionImpl slowest =
                    BroadcastReconnectTest.position(takeAndAck(consumers.get(2), 10, 3).get(2));
            await().atMost(Duration.ofSeconds(10)).until(() -> brokerSubscription(topic, "fleet").getCursor()
                    .getMarkDeletedPosition().equals(slowest));
            closeAll(consumers);
            cluster.admin().topics().unload(topic);
            String path = savedPath(topic, "fleet");
            assertTrue(metadata().exists(path).get(), "saved on unload");
            damage.apply(path);
            sent.addAll(publish(producer, "n", 5));
            // All come back within the recovery window (a consumer that comes back later is a new one).
            List<Consumer<String>> back = broadcastConsumers(topic, "fleet", 3);
            int[] acked = {10, 8, 3};
            try {
                for (int i = 0; i < 3; i++) {
                    ResumeChecks.assertResumedWithoutLoss(sent, acked[i], BroadcastReconnectTest.drain(back.get(i)),
                            acked[i] - 3);
                }
            } finally {
                closeAll(back);
            }
        }
    }
}
