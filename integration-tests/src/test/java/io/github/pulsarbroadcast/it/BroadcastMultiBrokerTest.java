package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertNotEquals;
import static org.testng.Assert.assertTrue;

import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.testng.annotations.BeforeClass;
import org.testng.annotations.Test;

/**
 * Two brokers with the plugin on one ZooKeeper and bookie. While a producer publishes and broadcast consumers consume,
 * the topic moves to the other broker (unload), or its broker crashes: every consumer receives every message, in
 * order of first delivery, none lost, duplicates within the documented bound.
 *
 * <p>Threading: the test thread drives; a scheduler thread publishes; the client's listener threads record.
 */
public class BroadcastMultiBrokerTest extends BroadcastTestBase {

    private static final int MESSAGES = 300;
    private static final int CONSUMERS = 5;
    /** Messages between the slowest consumer's persisted acknowledgement and the newest: at 100 msg/s, acks every
     *  message and a mark-delete sync every 100 ms (plus Pulsar's 1/s mark-delete persistence after a crash). */
    private static final int MAX_DUPLICATES = 150;

    @Override
    protected void configureBroker(ServiceConfiguration conf) {
        conf.getProperties().setProperty("broadcastMarkDeleteIntervalMs", "100");
    }

    @BeforeClass(alwaysRun = true)
    public void addSecondBroker() throws Exception {
        cluster.addBroker();
    }

    private PulsarClient bothBrokersClient() throws Exception {
        PulsarClient c = PulsarClient.builder().serviceUrl(everyBrokerServiceUrl()).build();
        closeAfterTest(c);
        return c;
    }


    /** A broadcast consumer that records what it receives and acknowledges each message. */
    private List<String> recordingConsumer(PulsarClient c, String topic, String name) throws Exception {
        List<String> received = Collections.synchronizedList(new ArrayList<>());
        Consumer<String> consumer = Broadcast.configure(c.newConsumer(Schema.STRING)).topic(topic)
                .subscriptionName("fleet").consumerName(name).receiverQueueSize(10)
                .messageListener((cons, msg) -> {
                    received.add(msg.getValue());
                    cons.acknowledgeAsync(msg);
                }).subscribe();
        closeAfterTest(consumer);
        return received;
    }

    /** Publishes MESSAGES at 100 per second; returns the values in order and a counter of sends issued. */
    private CompletableFuture<List<String>> publishInBackground(Producer<String> producer, AtomicInteger issued) {
        ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
        closeAfterTest((AutoCloseable) scheduler::shutdownNow);
        List<String> values = new ArrayList<>();
        List<CompletableFuture<MessageId>> sends = Collections.synchronizedList(new ArrayList<>());
        CompletableFuture<List<String>> done = new CompletableFuture<>();
        scheduler.scheduleAtFixedRate(() -> {
            int i = issued.get();
            if (i < MESSAGES) {
                String v = "m-" + i;
                values.add(v);
                sends.add(producer.sendAsync(v));
                issued.incrementAndGet();
            } else if (!done.isDone()) {
                CompletableFuture.allOf(sends.toArray(new CompletableFuture[0]))
                        .whenComplete((x, e) -> done.complete(values));
            }
        }, 0, 10, TimeUnit.MILLISECONDS);
        return done;
    }

    private void runMove(String topic, ThrowingRunnable move) throws Exception {
        PulsarClient c = bothBrokersClient();
        List<List<String>> received = new ArrayList<>();
        for (int i = 0; i < CONSUMERS; i++) {
            received.add(recordingConsumer(c, topic, "vehicle-" + i));
        }
        Producer<String> producer = c.newProducer(Schema.STRING).topic(topic).enableBatching(false)
                .sendTimeout(0, TimeUnit.SECONDS).create();
        closeAfterTest(producer);
        AtomicInteger issued = new AtomicInteger();
        CompletableFuture<List<String>> published = publishInBackground(producer, issued);
        await().atMost(Duration.ofSeconds(30)).until(() -> issued.get() >= MESSAGES / 3);
        move.run();
        List<String> sent = published.get(120, TimeUnit.SECONDS);
        try {
            await().atMost(Duration.ofSeconds(60)).until(() -> received.stream()
                    .allMatch(got -> new LinkedHashSet<>(snapshot(got)).size() == MESSAGES));
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            StringBuilder counts = new StringBuilder();
            for (int i = 0; i < CONSUMERS; i++) {
                List<String> got = snapshot(received.get(i));
                counts.append(String.format("%n vehicle-%d: %d received, %d distinct, last %s", i, got.size(),
                        new LinkedHashSet<>(got).size(), got.isEmpty() ? "-" : got.get(got.size() - 1)));
            }
            throw new AssertionError("not every consumer got all " + MESSAGES + " messages:" + counts, e);
        }
        for (int i = 0; i < CONSUMERS; i++) {
            assertDeliveredInOrder(sent, snapshot(received.get(i)), "vehicle-" + i);
        }
    }

    private static List<String> snapshot(List<String> list) {
        synchronized (list) {
            return new ArrayList<>(list);
        }
    }

    /** Every message, first deliveries in publish order, duplicates bounded. */
    private static void assertDeliveredInOrder(List<String> sent, List<String> got, String who) {
        List<String> firsts = new ArrayList<>(new LinkedHashSet<>(got));
        assertEquals(firsts, sent, who + " first deliveries");
        int duplicates = got.size() - firsts.size();
        assertTrue(duplicates <= MAX_DUPLICATES, who + " saw " + duplicates + " duplicates");
    }

    /**
     * The owning broker stops gracefully (it unloads its topics, as {@code pulsar-admin topics unload} does, and
     * leaves the cluster) and comes back: the topic moves to the other broker while consumers consume. (Pulsar 2.10
     * cannot name the destination of an admin unload, and its load manager hands a just-unloaded bundle back to the
     * same broker, so a graceful stop is the deterministic way to move a topic here; it is also what a rolling
     * restart does.)
     */
    @Test(groups = "integration", timeOut = 240_000)
    public void topicMovesToTheOtherBrokerWhileConsumingLosesNothing() throws Exception {
        String topic = newTopic("moving");
        cluster.admin().topics().createNonPartitionedTopic(topic);
        runMove(topic, () -> {
            int before = ownerIndex(topic);
            cluster.restartBroker(before);
            assertNotEquals(ownerIndex(topic), before, "the topic did not move");
        });
    }

    /** Runs last: it leaves one broker dead. */
    @Test(groups = "integration", timeOut = 240_000, priority = 1)
    public void owningBrokerCrashesWhileConsumingLosesNothing() throws Exception {
        String topic = newTopic("crash");
        cluster.admin().topics().createNonPartitionedTopic(topic);
        runMove(topic, () -> cluster.crashBroker(ownerIndex(topic)));
    }


    /** A step that may throw. */
    @FunctionalInterface
    private interface ThrowingRunnable {
        void run() throws Exception;
    }
}
