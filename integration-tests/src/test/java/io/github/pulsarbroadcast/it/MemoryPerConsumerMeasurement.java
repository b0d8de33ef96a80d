package io.github.pulsarbroadcast.it;

import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.ConsumerBuilder;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionType;
import org.testng.annotations.AfterClass;
import org.testng.annotations.Test;

/**
 * Measures the broker heap each broadcast consumer costs beyond stock Pulsar's own per-consumer objects: the heap
 * with N consumers on one stock Failover subscription, against the heap with N consumers on one broadcast
 * subscription, same clients and settings (the stock consumers carry a dummy property of the same size as the
 * broadcast one). Client-side and stock objects are the same in both runs and cancel out; the difference is the
 * plugin's state (virtual cursor, bookkeeping, map entries). A warm-up round is discarded; the median of five is
 * reported.
 *
 * <p>Not part of the default suite (group {@code measurement}); run with
 * {@code ./mvnw -B -ntp verify -pl integration-tests -am -Dgroups=measurement -Dtest=MemoryPerConsumerMeasurement
 * -Dsurefire.failIfNoSpecifiedTests=false} and read the line starting with {@code MEMORY} in
 * {@code integration-tests/target/surefire-reports/*MemoryPerConsumerMeasurement-output.txt}.
 */
public class MemoryPerConsumerMeasurement extends BroadcastTestBase {

    private static final int N = Integer.getInteger("measurement.consumers", 5_000);
    private static final int ROUNDS = 5;
    private final List<PulsarClient> clients = new ArrayList<>();

    @Test(groups = "measurement", timeOut = 1_800_000)
    public void heapPerBroadcastConsumerBeyondStock() throws Exception {
        for (int i = 0; i < 4; i++) {
            clients.add(newClient());
        }
        liveBytesFor(newTopic("mem-warmup"), false); // class loading and first-time allocations, discarded
        liveBytesFor(newTopic("mem-warmup"), true);
        StringBuilder report = new StringBuilder();
        double[] extra = new double[ROUNDS];
        Map<String, Long> classDelta = new TreeMap<>();
        for (int round = 0; round < ROUNDS; round++) {
            Map<String, Long> stock = liveBytesFor(newTopic("mem-stock"), false);
            Map<String, Long> broadcast = liveBytesFor(newTopic("mem-broadcast"), true);
            extra[round] = (broadcast.get(TOTAL) - stock.get(TOTAL)) / (double) N;
            report.append(String.format("round %d: stock %.0f B/consumer, broadcast %.0f B/consumer, extra %.0f B%n",
                    round, stock.get(TOTAL) / (double) N, broadcast.get(TOTAL) / (double) N, extra[round]));
            if (round == ROUNDS - 1) {
                broadcast.forEach((k, v) -> classDelta.put(k, v - stock.getOrDefault(k, 0L)));
                stock.forEach((k, v) -> classDelta.putIfAbsent(k, -v));
            }
        }
        java.util.Arrays.sort(extra);
        System.out.print(report);
        System.out.println("Largest per-consumer differences by class (last round, bytes per consumer):");
        classDelta.entrySet().stream().filter(e -> !e.getKey().equals(TOTAL))
                .sorted((x, y) -> Long.compare(Math.abs(y.getValue()), Math.abs(x.getValue()))).limit(15)
                .forEach(e -> System.out.printf("  %8.1f  %s%n", e.getValue() / (double) N, e.getKey()));
        System.out.printf("MEMORY consumers=%d extra-bytes-per-broadcast-consumer median=%.0f min=%.0f max=%.0f%n", N,
                extra[ROUNDS / 2], extra[0], extra[ROUNDS - 1]);
    }

    private static final String TOTAL = "Total";

    /** Live bytes per class (and in total) added while N consumers are attached to one subscription of topic. */
    private Map<String, Long> liveBytesFor(String topic, boolean broadcast) throws Exception {
        Map<String, Long> before = liveHistogram();
        List<CompletableFuture<Consumer<byte[]>>> subscribing = new ArrayList<>();
        for (int i = 0; i < N; i++) {
            ConsumerBuilder<byte[]> b = clients.get(i % clients.size()).newConsumer(Schema.BYTES).topic(topic)
                    .subscriptionName("fleet").consumerName("c-" + i).receiverQueueSize(10);
            // The stock consumers carry a property pair of the same size, so that both runs hold the same client
            // and stock-broker objects and only the plugin's own state differs.
            b = broadcast ? Broadcast.configure(b) : b.subscriptionType(SubscriptionType.Failover)
                    .subscriptionProperties(Map.of("pulsar.subscription.xxxx", "xxxxxxxxx"))
                    .property("pulsar.subscription.xxxx", "xxxxxxxxx");
            subscribing.add(b.subscribeAsync());
        }
        List<Consumer<byte[]>> consumers = new ArrayList<>();
        for (CompletableFuture<Consumer<byte[]>> f : subscribing) {
            consumers.add(f.get(300, TimeUnit.SECONDS));
        }
        Map<String, Long> with = liveHistogram();
        for (Consumer<byte[]> c : consumers) {
            c.close();
        }
        cluster.admin().topics().delete(topic, true);
        Map<String, Long> delta = new HashMap<>();
        with.forEach((k, v) -> delta.put(k, v - before.getOrDefault(k, 0L)));
        return delta;
    }

    /** Live bytes per class after a full GC, from the JVM's own class histogram (GC.class_histogram). */
    private static Map<String, Long> liveHistogram() throws Exception {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        String text = (String) server.invoke(new ObjectName("com.sun.management:type=DiagnosticCommand"),
                "gcClassHistogram", new Object[] {null}, new String[] {String[].class.getName()});
        Map<String, Long> bytes = new HashMap<>();
        for (String line : text.split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length >= 4 && f[0].endsWith(":")) {
                bytes.merge(f[3], Long.parseLong(f[2]), Long::sum);
            } else if (f.length >= 3 && f[0].equals(TOTAL)) {
                bytes.put(TOTAL, Long.parseLong(f[2]));
            }
        }
        return bytes;
    }

    @AfterClass(alwaysRun = true)
    public void closeClients() throws Exception {
        for (PulsarClient c : clients) {
            c.close();
        }
    }
}
