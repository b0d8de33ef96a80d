package io.github.pulsarbroadcast.it;

import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.ArrayList;
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
 * subscription, same clients and settings. Client-side objects are the same in both runs and cancel out; the
 * difference is the plugin's state (virtual cursor, bookkeeping, map entries).
 *
 * <p>Not part of the default suite (group {@code measurement}); run with
 * {@code ./mvnw -B -ntp verify -pl integration-tests -am -Dgroups=measurement -Dtest=MemoryPerConsumerMeasurement
 * -Dsurefire.failIfNoSpecifiedTests=false} and read the line starting with {@code MEMORY} in
 * {@code integration-tests/target/surefire-reports/*MemoryPerConsumerMeasurement-output.txt}.
 */
public class MemoryPerConsumerMeasurement extends BroadcastTestBase {

    private static final int N = Integer.getInteger("measurement.consumers", 5_000);
    private static final int ROUNDS = 3;
    private final List<PulsarClient> clients = new ArrayList<>();

    @Test(groups = "measurement", timeOut = 1_800_000)
    public void heapPerBroadcastConsumerBeyondStock() throws Exception {
        for (int i = 0; i < 4; i++) {
            clients.add(newClient());
        }
        StringBuilder report = new StringBuilder();
        double[] extra = new double[ROUNDS];
        for (int round = 0; round < ROUNDS; round++) {
            long stock = heapFor(newTopic("mem-stock"), false);
            long broadcast = heapFor(newTopic("mem-broadcast"), true);
            extra[round] = (broadcast - stock) / (double) N;
            report.append(String.format("round %d: stock %.0f B/consumer, broadcast %.0f B/consumer, extra %.0f B%n",
                    round, stock / (double) N, broadcast / (double) N, extra[round]));
        }
        java.util.Arrays.sort(extra);
        System.out.print(report);
        System.out.printf("MEMORY consumers=%d extra-bytes-per-broadcast-consumer median=%.0f min=%.0f max=%.0f%n", N,
                extra[ROUNDS / 2], extra[0], extra[ROUNDS - 1]);
    }

    /** Heap growth (after full GCs) while N consumers are attached to one subscription of {@code topic}. */
    private long heapFor(String topic, boolean broadcast) throws Exception {
        long before = usedHeapAfterGc();
        List<CompletableFuture<Consumer<byte[]>>> subscribing = new ArrayList<>();
        for (int i = 0; i < N; i++) {
            ConsumerBuilder<byte[]> b = clients.get(i % clients.size()).newConsumer(Schema.BYTES).topic(topic)
                    .subscriptionName("fleet").consumerName("c-" + i).receiverQueueSize(10);
            b = broadcast ? Broadcast.configure(b) : b.subscriptionType(SubscriptionType.Failover);
            subscribing.add(b.subscribeAsync());
        }
        List<Consumer<byte[]>> consumers = new ArrayList<>();
        for (CompletableFuture<Consumer<byte[]>> f : subscribing) {
            consumers.add(f.get(300, TimeUnit.SECONDS));
        }
        long with = usedHeapAfterGc();
        for (Consumer<byte[]> c : consumers) {
            c.closeAsync();
        }
        cluster.admin().topics().delete(topic, true);
        return with - before;
    }

    private static long usedHeapAfterGc() {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        for (int i = 0; i < 3; i++) {
            memory.gc();
        }
        return memory.getHeapMemoryUsage().getUsed();
    }

    @AfterClass(alwaysRun = true)
    public void closeClients() throws Exception {
        for (PulsarClient c : clients) {
            c.close();
        }
    }
}
