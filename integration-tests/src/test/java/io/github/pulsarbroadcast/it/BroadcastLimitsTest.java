package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;

import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;
import org.testng.annotations.AfterClass;
import org.testng.annotations.Test;

/**
 * docs/configuration.md's memory and acknowledgement bounds, set in the broker's configuration as an operator sets
 * them and observed on the real broker: {@code broadcastWindowMaxBytes} (one subscription's window of recent
 * entries), {@code broadcastWindowBrokerMaxBytes} (all windows of the broker together) and
 * {@code broadcastMaxAckRangesPerConsumer} (individual acks kept per consumer), each with what the docs promise
 * beyond the bound: nothing lost. Each bound is small enough here that the default would fail the test. The broker
 * also logs every setting it runs with ({@code broadcastMaxPendingAcksPerConnection} is exercised by
 * {@link BroadcastAckOnExecutorTest}).
 *
 * <p>Threading: TestNG's test thread only; the log watch collects on the broker's threads.
 */
public class BroadcastLimitsTest extends BroadcastTestBase {

    private static final int WINDOW_MAX_BYTES = 10_000;
    private static final int BROKER_MAX_BYTES = 16_000;
    private static final int MESSAGES = 30;
    /** Opened when the broker is configured, before it starts, so that its start-up lines are collected. */
    private LogLines startLines;

    @Override
    protected void configureBroker(ServiceConfiguration conf) {
        conf.getProperties().setProperty("broadcastWindowMaxBytes", Integer.toString(WINDOW_MAX_BYTES));
        conf.getProperties().setProperty("broadcastWindowBrokerMaxBytes", Integer.toString(BROKER_MAX_BYTES));
        conf.getProperties().setProperty("broadcastMaxAckRangesPerConsumer", "2");
        conf.getProperties().setProperty("broadcastExecutorSlowTaskMs", "250");
        conf.getProperties().setProperty("broadcastMaxPendingAcksPerConnection", "7");
        conf.getProperties().setProperty("broadcastStatsIntervalMs", "100");
        conf.getProperties().setProperty("broadcastMarkDeleteIntervalMs", "100");
        startLines = LogLines.watch("io.github.pulsarbroadcast", "pulsar-broadcast installed its connection handler");
    }

    @AfterClass(alwaysRun = true)
    public void closeLogWatch() {
        if (startLines != null) {
            startLines.close();
        }
    }

    /** operations.md: the broker's start-up line names every setting it runs with, these included. */
    @Test(groups = "integration", timeOut = 60_000)
    public void theBrokerLogsTheSettingsItRuns() {
        List<String> lines = startLines.lines();
        assertEquals(lines.size(), 1, lines.toString());
        for (String setting : new String[] {"broadcastWindowMaxBytes=10000", "broadcastWindowBrokerMaxBytes=16000",
                "broadcastMaxAckRangesPerConsumer=2", "broadcastExecutorSlowTaskMs=250",
                "broadcastMaxPendingAcksPerConnection=7"}) {
            assertTrue(lines.get(0).contains(setting), setting + " in " + lines.get(0));
        }
    }

    /**
     * A consumer with a receiver queue of one stays behind while another keeps up: the window keeps the newest entries
     * for it, at most {@code broadcastWindowMaxBytes} of them (the default, 64 MiB, would keep all 29 it needs), and
     * the entries that fell out reach it by catch-up reads, every message in order.
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void aWindowHoldsAtMostItsBytesAndTheRestIsReadAgain() throws Exception {
        awaitNoWindowBytes();
        String topic = newTopic("window-bytes");
        String sub = "topic=\"" + topic + "\",subscription=\"fleet\"";
        try {
            Consumer<String> slow = slowConsumer(topic);
            List<String> sent = publishAndDeliverToAFastConsumer(topic);
            double[] held = new double[2];
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
                Map<String, Double> m = scrape(sub);
                held[0] = m.get("pulsar_broadcast_window_entries");
                held[1] = m.get("pulsar_broadcast_window_bytes");
                assertTrue(held[1] > WINDOW_MAX_BYTES - 2 * 1_100 && held[1] <= WINDOW_MAX_BYTES, m.toString());
            });
            assertEquals(receive(slow, MESSAGES), sent, "the slow consumer, in order");
            double catchUp = scrape(sub).get("pulsar_broadcast_catchup_entries_read_total");
            assertTrue(catchUp >= MESSAGES - 1 - held[0], "the entries outside the window (" + held[0]
                    + " held) were read again: " + catchUp);
        } finally {
            deleteTopics(List.of(topic));
        }
    }

    /**
     * Two subscriptions, each with a consumer behind: each window alone would hold more than half of
     * {@code broadcastWindowBrokerMaxBytes} (the test above), together they hold no more than it, and both slow
     * consumers still get every message in order.
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void theWindowsOfABrokerShareItsBudget() throws Exception {
        awaitNoWindowBytes();
        List<String> topics = List.of(newTopic("budget-a"), newTopic("budget-b"));
        try {
            List<Consumer<String>> slow = new ArrayList<>();
            List<List<String>> sent = new ArrayList<>();
            for (String topic : topics) {
                slow.add(slowConsumer(topic));
                sent.add(publishAndDeliverToAFastConsumer(topic));
            }
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
                String body = metrics();
                double a = Scrapes.sample(body, "pulsar_broadcast_window_bytes", topics.get(0));
                double b = Scrapes.sample(body, "pulsar_broadcast_window_bytes", topics.get(1));
                assertTrue(a > WINDOW_MAX_BYTES / 2 && b >= 0 && a + b > WINDOW_MAX_BYTES, a + " + " + b);
                assertTrue(Scrapes.sum(body, "pulsar_broadcast_window_bytes") <= BROKER_MAX_BYTES, a + " + " + b);
            });
            for (int i = 0; i < topics.size(); i++) {
                assertEquals(receive(slow.get(i), MESSAGES), sent.get(i), "the slow consumer of " + topics.get(i));
            }
        } finally {
            deleteTopics(topics);
        }
    }

    /**
     * configuration.md on {@code broadcastMaxAckRangesPerConsumer}: an individual ack that would need one range more
     * is not recorded (counted as dropped) and that message comes again when the consumer reconnects, so it is
     * delivered at least once; the acks that were kept hold.
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void anAckBeyondTheRangeBoundIsDroppedAndItsMessageComesBack() throws Exception {
        String topic = newTopic("ack-ranges");
        String sub = "topic=\"" + topic + "\",subscription=\"fleet\"";
        List<String> sent;
        try (Consumer<String> car = carWithoutAckGrouping(topic); Producer<String> producer = producer(topic)) {
            sent = publish(producer, "r", 10);
            List<Message<String>> got = take(car, 10);
            for (int i : new int[] {1, 3, 5, 7}) { // four ranges above the cumulative position; two are kept
                car.acknowledge(got.get(i));
            }
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertEquals(
                    scrape(sub).get("pulsar_broadcast_dropped_acks_total"), 2.0, "the acks of r-5 and r-7"));
        }
        try (Consumer<String> again = carWithoutAckGrouping(topic)) {
            List<String> expected = new ArrayList<>(sent);
            expected.removeAll(List.of("r-1", "r-3"));
            assertEquals(values(take(again, expected.size())), expected, "everything but the two kept acks");
            assertEquals(again.receive(1, TimeUnit.SECONDS), null, "nothing more");
        }
    }

    private Consumer<String> carWithoutAckGrouping(String topic) throws Exception {
        return Broadcast.configure(client.newConsumer(Schema.STRING).topic(topic).subscriptionName("fleet")
                .consumerName("car").acknowledgmentGroupTime(0, TimeUnit.MILLISECONDS)).subscribe();
    }

    /** A consumer named "slow" whose receiver queue of one, never read, keeps it at the second message. */
    private Consumer<String> slowConsumer(String topic) throws Exception {
        return closeAfterTest(Broadcast.configure(client.newConsumer(Schema.STRING).topic(topic)
                .subscriptionName("fleet").consumerName("slow").receiverQueueSize(1)).subscribe());
    }

    /** Publishes {@link #MESSAGES} messages of about 1 KB, which a consumer named "fast" receives and acks. */
    private List<String> publishAndDeliverToAFastConsumer(String topic) throws Exception {
        Consumer<String> fast = closeAfterTest(broadcastConsumer(topic, "fleet", "fast"));
        List<String> sent = new ArrayList<>();
        try (Producer<String> producer = producer(topic)) {
            for (int i = 0; i < MESSAGES; i++) {
                String value = i + "-" + "x".repeat(1_000);
                producer.send(value);
                sent.add(value);
            }
        }
        assertEquals(receive(fast, MESSAGES), sent);
        return sent;
    }

    /** The budget is the broker's: a test starts when no window of an earlier one holds any of it. */
    private void awaitNoWindowBytes() {
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() ->
                assertEquals(Scrapes.sum(metrics(), "pulsar_broadcast_window_bytes"), 0.0, "windows of other tests"));
    }

    /** Closes the test's consumers, then deletes its topics: their windows give the budget back. */
    private void deleteTopics(List<String> topics) throws Exception {
        closeTestResources();
        for (String topic : topics) {
            cluster.admin().topics().delete(topic, true);
        }
    }

    private Map<String, Double> scrape(String selector) throws Exception {
        return Scrapes.subscription(metrics(), selector);
    }

    private String metrics() throws Exception {
        return Scrapes.get(cluster.webServiceUrl(), "/metrics/");
    }
}
