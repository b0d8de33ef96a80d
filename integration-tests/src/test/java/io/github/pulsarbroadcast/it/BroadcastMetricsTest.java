package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;
import org.apache.pulsar.client.impl.MessageIdImpl;
import org.testng.annotations.Test;

/**
 * docs/operations.md, "Metrics": the broker's real {@code /metrics}, scraped over HTTP, against a known workload.
 * Three broadcast consumers get 20 messages; two acknowledge all of them, one none; one more consumer leaves. Every
 * count the workload fixes is checked exactly, the format line by line, and a stock subscription on the same topic
 * adds no broadcast series.
 */
public class BroadcastMetricsTest extends BroadcastTestBase {

    @Override
    protected void configureBroker(ServiceConfiguration conf) {
        conf.getProperties().setProperty("broadcastMarkDeleteIntervalMs", "100");
        conf.getProperties().setProperty("broadcastConsumerRetentionSeconds", "600");
        conf.getProperties().setProperty("broadcastStatsIntervalMs", "100");
        // Stock's rates are computed when a test asks (BrokerService.updateRates), never by the periodic updater in
        // between, which would start a new rate period and leave the test's own computation a zero.
        conf.setStatsUpdateFrequencyInSecs(3600);
    }

    /**
     * Stock Pulsar's own series of a broadcast subscription, which its aggregator now builds from the plugin's
     * consumer totals instead of one record per consumer (StockConsumerStats): the consumer count and the message
     * counter are what admin {@code topics stats} reports (which still lists every consumer), also after a consumer
     * left (its messages counted once), and the plugin's counter shows the totals were used.
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void stockSeriesOfABroadcastSubscriptionComeFromItsTotals() throws Exception {
        String topic = newTopic("stock-series");
        List<Consumer<String>> consumers = broadcastConsumers(topic, "fleet", 5);
        Consumer<String> stock = stockSubscriber(topic);
        try (Producer<String> producer = producer(topic)) {
            publish(producer, "m", 10);
        }
        for (Consumer<String> c : consumers) {
            take(c, 10);
        }
        take(stock, 10);
        // The stats task (every 100 ms here) copies the counters into the stock consumers.
        long[] adminBytes = new long[1];
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            var adminStats = cluster.admin().topics().getStats(topic).getSubscriptions().get("fleet");
            assertEquals(adminStats.getConsumers().size(), 5, "admin stats list every consumer");
            assertEquals(adminStats.getMsgOutCounter(), 50L);
            adminBytes[0] = adminStats.getBytesOutCounter();
        });
        assertTrue(adminBytes[0] >= 50 * "m-0".length(), "bytes out: " + adminBytes[0]);
        String fleet = "topic=\"" + topic + "\",subscription=\"fleet\"";
        String topicOnly = "topic=\"" + topic + "\"";
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            String body = get("/metrics/");
            assertEquals(Scrapes.sample(body, "pulsar_out_messages_total", fleet), 50.0, "10 messages to 5 consumers");
            assertEquals(Scrapes.sample(body, "pulsar_out_bytes_total", fleet), (double) adminBytes[0]);
            assertEquals(Scrapes.sample(body, "pulsar_consumers_count", topicOnly), 6.0,
                    "5 broadcast consumers and the stock one");
            assertEquals(Scrapes.sample(body, "pulsar_subscription_unacked_messages", fleet), 0.0);
        });
        double summarized = scrape(fleet).get("pulsar_broadcast_stock_stats_summarized_total");
        assertTrue(summarized >= 1, "the stock aggregator got the totals");
        assertEquals(scrape(fleet).get("pulsar_broadcast_stock_stats_summarized_total") - summarized, 1.0,
                "operations.md: it rises by one per scrape");
        consumers.get(0).close();
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            String body = get("/metrics/");
            assertEquals(Scrapes.sample(body, "pulsar_consumers_count", "topic=\"" + topic + "\""), 5.0);
            assertEquals(Scrapes.sample(body, "pulsar_out_messages_total", fleet), 50.0,
                    "the departed consumer's 10 are counted once");
        });
        assertEquals(cluster.admin().topics().getStats(topic).getSubscriptions().get("fleet").getMsgOutCounter(),
                50L);
        closeAll(consumers.subList(1, 5));
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            String body = get("/metrics/");
            assertEquals(Scrapes.sample(body, "pulsar_consumers_count", topicOnly), 1.0, "only the stock consumer");
            assertEquals(Scrapes.sample(body, "pulsar_out_messages_total", fleet), 50.0, "no consumer left");
            assertEquals(Scrapes.sample(body, "pulsar_out_bytes_total", fleet), (double) adminBytes[0]);
        });
        stock.close();
    }

    /**
     * operations.md: stock's {@code messageAckRate} stays 0 for a broadcast subscription (its acks move the virtual
     * cursor, not through stock's ack handling), while a stock subscription's acks of the same messages, in the same
     * rate period, give it a rate: the rates are computed here, not left at their initial zero.
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void stockAckRateStaysZeroForABroadcastSubscription() throws Exception {
        String topic = newTopic("ack-rate");
        Consumer<String> broadcast = closeAfterTest(broadcastConsumer(topic, "fleet", "a"));
        Consumer<String> stock = closeAfterTest(stockSubscriber(topic));
        try (Producer<String> producer = producer(topic)) {
            publish(producer, "m", 10);
        }
        receive(broadcast, 10);
        receive(stock, 10);
        String fleet = "topic=\"" + topic + "\",subscription=\"fleet\"";
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() ->
                assertEquals(scrape(fleet).get("pulsar_broadcast_acks_total"), 10.0, "the broadcast acks arrived"));
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertEquals(
                cluster.admin().topics().getStats(topic).getSubscriptions().get("stock").getMsgBacklog(), 0L,
                "the stock acks arrived"));
        cluster.broker().getBrokerService().updateRates();
        var subscriptions = cluster.admin().topics().getStats(topic).getSubscriptions();
        assertTrue(subscriptions.get("stock").getMessageAckRate() > 0, "stock's own acks have a rate");
        assertEquals(subscriptions.get("fleet").getMessageAckRate(), 0.0);
    }

    /** A consumer of a stock (Shared) subscription named "stock" on {@code topic}, beside the broadcast one. */
    private Consumer<String> stockSubscriber(String topic) throws Exception {
        return client.newConsumer(Schema.STRING).topic(topic).subscriptionName("stock")
                .subscriptionType(SubscriptionType.Shared).subscribe();
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void metricsCountAKnownWorkload() throws Exception {
        String topic = newTopic("metrics");
        List<Consumer<String>> consumers = broadcastConsumers(topic, "fleet", 4);
        Consumer<String> stock = stockSubscriber(topic);
        try (Producer<String> producer = producer(topic)) {
            publish(producer, "m", 20);
        }
        for (int c = 0; c < 3; c++) {
            for (int i = 0; i < 20; i++) {
                Message<String> m = consumers.get(c).receive();
                if (c < 2) {
                    consumers.get(c).acknowledge(m);
                }
            }
        }
        // Other tests of this class leave subscriptions on other topics: select this topic's series.
        String sub = "topic=\"" + topic + "\",subscription=\"fleet\"";
        // The fourth consumer was sent its 20 too (its receiver queue holds them); it leaves without acking.
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertEquals(
                scrape(sub).get("pulsar_broadcast_messages_delivered_total"), 80.0, get("/metrics/").lines()
                        .filter(l -> l.startsWith("pulsar_broadcast_")).limit(30)
                        .collect(java.util.stream.Collectors.joining("\n"))));
        consumers.get(3).close();
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            Map<String, Double> m = scrape(sub);
            assertEquals(m.get("pulsar_broadcast_acks_total"), 40.0, "two consumers acked 20 each");
            assertEquals(m.get("pulsar_broadcast_stage_latency_ms_count{stage=\"dispatch_to_last_write\"}"), 20.0);
        });
        Map<String, Double> m = scrape(sub);
        assertEquals(m.get("pulsar_broadcast_messages_delivered_total"), 80.0, "20 messages to each of 4 consumers");
        assertTrue(m.get("pulsar_broadcast_bytes_delivered_total") >= 80 * "m-0".length());
        assertEquals(m.get("pulsar_broadcast_tail_entries_read_total"), 20.0, "each entry read once");
        // The four consumers share the client's one connection: a pass writes to all four in one send, so there are
        // fewer sends than messages delivered.
        double sends = m.get("pulsar_broadcast_connection_sends_total");
        assertTrue(sends >= 1 && sends < 80, "connection sends: " + sends);
        assertEquals(m.get("pulsar_broadcast_retained_positions"), 1.0, "the consumer that left");
        // Consumers by state and lags are as of the last periodic sync (every 100 ms here): wait for one after the
        // leave and the acks.
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            Map<String, Double> synced = scrape(sub);
            double connected = 0;
            for (String state : new String[] {"waiting", "pending", "catching_up", "idle"}) {
                connected += synced.get("pulsar_broadcast_consumers{state=\"" + state + "\"}");
            }
            assertEquals(connected, 3.0);
            assertEquals(synced.get("pulsar_broadcast_consumer_lag_entries{quantile=\"1\"}"), 20.0,
                    "two positions acked nothing: the one still connected and the one retained");
            assertEquals(synced.get("pulsar_broadcast_consumer_lag_entries{quantile=\"0.5\"}"), 0.0,
                    "median (nearest rank) of {0, 0, 20, 20}");
        });
        for (String stage : new String[] {"receive_to_persisted", "persisted_to_dispatch", "dispatch_to_first_write",
                "dispatch_to_last_write"}) {
            String key = "pulsar_broadcast_stage_latency_ms_count{stage=\"" + stage + "\"}";
            assertEquals(m.get(key), 20.0, key);
            assertEquals(m.get("pulsar_broadcast_stage_latency_ms_bucket{stage=\"" + stage + "\",le=\"+Inf\"}"),
                    20.0, stage);
        }
        assertTrue(m.get("pulsar_broadcast_fanout_pass_ms_count") >= 1);
        closeAll(consumers.subList(0, 3));
        stock.close();
    }

    /** operations.md: "messages (a batched entry counts its messages)"; the entry itself is read once. */
    @Test(groups = "integration", timeOut = 120_000)
    public void aBatchedEntryCountsItsMessages() throws Exception {
        String topic = newTopic("metrics-batch");
        Set<String> entries = new TreeSet<>();
        List<Consumer<String>> consumers = broadcastConsumers(topic, "fleet", 2);
        try (Producer<String> producer = client.newProducer(Schema.STRING).topic(topic).enableBatching(true)
                .batchingMaxPublishDelay(1, TimeUnit.HOURS).batchingMaxMessages(1_000)
                .create()) {
            List<CompletableFuture<MessageId>> sends =
                    new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                sends.add(producer.sendAsync("b-" + i));
            }
            producer.flush(); // one batch: one entry of five messages
            for (CompletableFuture<MessageId> send : sends) {
                MessageIdImpl id = (MessageIdImpl) send.get(30, TimeUnit.SECONDS);
                entries.add(id.getLedgerId() + ":" + id.getEntryId());
            }
        }
        assertEveryoneReceives(consumers, List.of("b-0", "b-1", "b-2", "b-3", "b-4"));
        String sub = "topic=\"" + topic + "\",subscription=\"fleet\"";
        // Each entry the producer wrote read once (one, unless the client split the batch: a full-suite run on
        // 2026-11-29 counted 2 here once, which this tells apart from an entry read twice).
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            Map<String, Double> m = scrape(sub);
            assertEquals(m.get("pulsar_broadcast_tail_entries_read_total"), (double) entries.size(),
                    "each entry once: " + entries);
            assertEquals(m.get("pulsar_broadcast_messages_delivered_total"), 10.0, "5 messages to each of 2");
        });
        closeAll(consumers);
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void everyFamilyIsWellFormedAndStockSubscriptionsAddNothing() throws Exception {
        String topic = newTopic("format");
        Consumer<String> broadcast = broadcastConsumer(topic, "fleet", "a");
        Consumer<String> stock = stockSubscriber(topic);
        String body = get("/metrics/");
        Set<String> typed = new HashSet<>();
        Map<String, String> types = new HashMap<>();
        for (String line : body.split("\n")) {
            if (line.startsWith("# TYPE pulsar_broadcast_")) {
                String[] parts = line.split(" ");
                assertTrue(typed.add(parts[2]), "one TYPE line per family: " + parts[2]);
                types.put(parts[2], parts[3]);
            } else if (line.startsWith("pulsar_broadcast_")) {
                Matcher s = Scrapes.SAMPLE.matcher(line);
                assertTrue(s.matches(), "not a Prometheus sample: " + line);
                Double.parseDouble(s.group(4).replace("+Inf", "Infinity"));
                assertFalse(line.contains("subscription=\"stock\""), "a stock subscription has no broadcast series");
                String family = familyOf(s.group(1), types);
                assertTrue(typed.contains(family), "sample before its TYPE line: " + line);
            }
        }
        assertEquals(types.get("pulsar_broadcast_consumers"), "gauge");
        assertEquals(types.get("pulsar_broadcast_acks_total"), "counter");
        assertEquals(types.get("pulsar_broadcast_stage_latency_ms"), "histogram");
        assertEquals(types.get("pulsar_broadcast_executor_tasks_total"), "counter");
        assertTrue(body.contains("pulsar_broadcast_executor_queue_depth{cluster=\"" + cluster.clusterName()
                + "\",thread=\"broadcast-dispatch-0\"}"), "executor threads are labelled");
        assertTrue(body.contains("pulsar_broadcast_subscriptions{cluster=\"" + cluster.clusterName() + "\"}"));
        // Every metric the Grafana dashboard and the alert rules query is one the broker exports.
        for (String file : new String[] {"../docker/grafana/pulsar-broadcast.json",
                "../docker/prometheus/pulsar-broadcast-alerts.yml"}) {
            Matcher m = Pattern.compile("pulsar_broadcast_[a-z_]*[a-z]").matcher(Files.readString(Path.of(file)));
            int names = 0;
            while (m.find()) {
                names++;
                assertTrue(typed.contains(familyOf(m.group(), types)), file + " queries " + m.group()
                        + ", which the broker does not export");
            }
            assertTrue(names > 5, file + ": " + names + " metric names found");
        }
        assertTheGuideListsExactly(typed, types);
        broadcast.close();
        stock.close();
    }

    /**
     * docs/operations.md lists every family the broker exports, and names none it does not. Added in the forty-third
     * session, when a review found three families (the scrape's own cost) exported and not listed.
     */
    private static void assertTheGuideListsExactly(Set<String> exported, Map<String, String> types)
            throws IOException {
        String guide = Files.readString(Path.of("../docs/operations.md"));
        for (String family : exported) {
            assertTrue(guide.contains("`" + family + "`"), "docs/operations.md does not list " + family);
        }
        Matcher named = Pattern.compile("`(pulsar_broadcast_[a-z_]*[a-z])").matcher(guide);
        while (named.find()) {
            assertTrue(exported.contains(familyOf(named.group(1), types)), "docs/operations.md names "
                    + named.group(1) + ", which the broker does not export");
        }
    }

    /**
     * The counters of the edges, on the endpoint: catch-up reads (a consumer joining at the earliest position after
     * the window was trimmed), the window (a consumer whose receiver queue is full holds it), a redelivery, a resume
     * by name, and consumers moved forward when an operator skips the backlog.
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void edgeCountersReachTheEndpoint() throws Exception {
        String topic = newTopic("edges");
        String sub = "topic=\"" + topic + "\",subscription=\"fleet\"";
        Consumer<String> carA = broadcastConsumer(topic, "fleet", "car-a");
        try (Producer<String> producer = producer(topic)) {
            publish(producer, "m", 20);
        }
        take(carA, 20); // at the tail, acknowledging nothing
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() ->
                assertEquals(scrape(sub).get("pulsar_broadcast_window_entries"), 0.0, "the sync trims the window"));
        // Before car-b subscribes (a read-only audit of the tests, forty-sixth session: read after, its catch-up
        // deliveries could be in both readings, and the check could not fail).
        Map<String, Double> timed = scrape(sub);
        Consumer<String> carB = closeAfterTest(io.github.pulsarbroadcast.broadcast.client.Broadcast.configure(
                client.newConsumer(Schema.STRING).topic(topic).subscriptionName("fleet").consumerName("car-b")
                        .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)).subscribe());
        take(carB, 20);
        Map<String, Double> m = scrape(sub);
        for (String stage : new String[] {"persisted_to_dispatch", "dispatch_to_first_write",
                "dispatch_to_last_write"}) {
            String count = "pulsar_broadcast_stage_latency_ms_count{stage=\"" + stage + "\"}";
            assertTrue(timed.get(count) >= 1, "car-a's tail deliveries were timed: " + timed);
            assertEquals(m.get(count), timed.get(count), "operations.md: catch-up deliveries are not timed, " + stage);
        }
        assertEquals(m.get("pulsar_broadcast_catchup_entries_read_total"), 20.0, "car-b's 20, read from storage");
        assertTrue(m.get("pulsar_broadcast_catchup_bytes_read_total") >= 20 * "m-0".length(), m.toString());
        assertEquals(m.get("pulsar_broadcast_redeliveries_total"), 0.0);
        carB.redeliverUnacknowledgedMessages();
        take(carB, 20);
        assertEquals(scrape(sub).get("pulsar_broadcast_redeliveries_total"), 1.0);
        carB.close();
        Consumer<String> slow = closeAfterTest(io.github.pulsarbroadcast.broadcast.client.Broadcast.configure(
                client.newConsumer(Schema.STRING).topic(topic).subscriptionName("fleet").consumerName("car-b")
                        .receiverQueueSize(1)).subscribe());
        assertEquals(scrape(sub).get("pulsar_broadcast_resumed_total"), 1.0, "car-b resumed its position");
        // car-b, back with a queue of one, stays far behind: the sync trims the window only up to its next position,
        // so the tail's new entries stay in the window.
        try (Producer<String> producer = producer(topic)) {
            publish(producer, "n", 5);
        }
        take(carA, 5);
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            Map<String, Double> w = scrape(sub);
            assertTrue(w.get("pulsar_broadcast_window_entries") >= 1, w.toString());
            assertTrue(w.get("pulsar_broadcast_window_bytes") >= "n-0".length(), w.toString());
        });
        cluster.admin().topics().skipAllMessages(topic, "fleet");
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertEquals(
                scrape(sub).get("pulsar_broadcast_consumers_moved_forward_total"), 2.0,
                "both connected consumers were behind the skipped backlog"));
        closeAll(List.of(carA, slow));
    }

    /**
     * With the broker's {@code exposeTopicLevelMetricsInPrometheus} off no series names a topic, the plugin's neither
     * (regression: a review found the per-subscription families written regardless).
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void noSeriesNamesATopicWhenTopicLevelMetricsAreOff() throws Exception {
        String topic = newTopic("no-topic-level");
        List<Consumer<String>> consumers = broadcastConsumers(topic, "fleet", 2);
        try {
            assertTrue(get("/metrics/").contains(topic), "on by default: the topic is named");
            cluster.broker().getConfiguration().setExposeTopicLevelMetricsInPrometheus(false);
            String body = get("/metrics/");
            for (String line : body.split("\n")) {
                assertFalse(line.startsWith("pulsar_broadcast_") && line.contains("topic=\""), line);
            }
            assertTrue(body.lines().anyMatch(l -> l.startsWith("pulsar_broadcast_subscriptions{")
                    && !l.endsWith(" 0") && !l.endsWith(" 0.0")), "the subscriptions are still counted: "
                    + body.lines().filter(l -> l.startsWith("pulsar_broadcast_s")).collect(Collectors.toList()));
        } finally {
            cluster.broker().getConfiguration().setExposeTopicLevelMetricsInPrometheus(true);
            closeAll(consumers);
        }
    }

    private static String familyOf(String sample, Map<String, String> types) {
        for (String suffix : new String[] {"_bucket", "_sum", "_count"}) {
            if (sample.endsWith(suffix)) {
                String base = sample.substring(0, sample.length() - suffix.length());
                if ("histogram".equals(types.get(base))) {
                    return base;
                }
            }
        }
        return sample;
    }

    /** The plugin's samples of the one subscription matching {@code selector} (see {@link Scrapes#subscription}). */
    private Map<String, Double> scrape(String selector) throws Exception {
        return Scrapes.subscription(get("/metrics/"), selector);
    }

    private String get(String path) throws Exception {
        return Scrapes.get(cluster.webServiceUrl(), path);
    }
}
