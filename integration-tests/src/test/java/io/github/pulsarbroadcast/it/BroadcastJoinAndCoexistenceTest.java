package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertNotEquals;
import static org.testng.Assert.assertNull;
import static org.testng.Assert.assertTrue;

import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastDispatcher;
import io.github.pulsarbroadcast.executor.SubscriptionKey;
import io.github.pulsarbroadcast.executor.SubscriptionOrderedExecutor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;
import org.apache.pulsar.client.impl.MessageIdImpl;
import org.apache.pulsar.client.impl.TopicMessageIdImpl;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.testng.annotations.Test;

/**
 * design.md, "The virtual cursor" (join) and "Threads": where a consumer joins, and that a join writes no metadata;
 * several broadcast subscriptions
 * on one topic are independent and dispatch on different threads; stock subscription types on the same topic behave
 * as before; partitioned topics.
 */
public class BroadcastJoinAndCoexistenceTest extends BroadcastTestBase {

    private static final int THREADS = 2;

    @Override
    protected void configureBroker(ServiceConfiguration conf) {
        conf.getProperties().setProperty("broadcastExecutorThreads", String.valueOf(THREADS));
        conf.getProperties().setProperty("broadcastMarkDeleteIntervalMs", "100");
    }

    private Consumer<String> joining(String topic, String name, SubscriptionInitialPosition position)
            throws Exception {
        return Broadcast.configure(client.newConsumer(Schema.STRING)).topic(topic).subscriptionName("fleet")
                .consumerName(name).subscriptionInitialPosition(position).subscribe();
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void latestJoinsAtTheTailAndEarliestAtTheRetainedStart() throws Exception {
        String topic = newTopic("join");
        try (Consumer<String> keeper = broadcastConsumer(topic, "fleet", "keeper");
             Producer<String> producer = producer(topic)) {
            List<String> before = publish(producer, "old", 5);
            try (Consumer<String> latest = joining(topic, "latest", SubscriptionInitialPosition.Latest);
                 Consumer<String> earliest = joining(topic, "earliest", SubscriptionInitialPosition.Earliest)) {
                List<String> after = publish(producer, "new", 3);
                assertEquals(receive(latest, 3), after);
                assertNull(latest.receive(500, TimeUnit.MILLISECONDS));
                List<String> all = new ArrayList<>(before);
                all.addAll(after);
                // The keeper acknowledged nothing, so the subscription still retains the old messages.
                assertEquals(receive(earliest, 8), all);
            }
        }
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void joiningWritesNothingToTheMetadataStore() throws Exception {
        String topic = newTopic("no-writes");
        try (Consumer<String> first = broadcastConsumer(topic, "fleet", "first")) {
            String ledgerPath = "/managed-ledgers/" + brokerTopic(topic).getManagedLedger().getName();
            String cursorPath = ledgerPath + "/fleet";
            ZooKeeper zk = new ZooKeeper("127.0.0.1:" + cluster.zookeeperPort(), 30_000, e -> { });
            try {
                await().atMost(Duration.ofSeconds(10)).until(() -> zk.getState().isConnected());
                Stat ledgerBefore = zk.exists(ledgerPath, false);
                Stat cursorBefore = zk.exists(cursorPath, false);
                assertTrue(ledgerBefore != null && cursorBefore != null, "znodes " + ledgerPath);
                // The saved positions: written by the periodic save (every 5 s by default), not per join.
                String positionsPath = BroadcastDurablePositionsTest.savedPath(topic, "fleet");
                await().atMost(Duration.ofSeconds(20)).until(() -> zk.exists(positionsPath, false) != null);
                int positionsBefore = zk.exists(positionsPath, false).getVersion();
                long start = System.nanoTime();
                List<Consumer<String>> joined = broadcastConsumers(topic, "fleet", 10);
                closeAll(joined);
                Stat ledgerAfter = zk.exists(ledgerPath, false);
                Stat cursorAfter = zk.exists(cursorPath, false);
                int positionsWrites = zk.exists(positionsPath, false).getVersion() - positionsBefore;
                long intervals = (System.nanoTime() - start) / 5_000_000_000L;
                assertEquals(ledgerAfter.getMzxid(), ledgerBefore.getMzxid(), "managed ledger node written");
                assertEquals(ledgerAfter.getCversion(), ledgerBefore.getCversion(), "cursor nodes added or removed");
                assertEquals(cursorAfter.getMzxid(), cursorBefore.getMzxid(), "cursor node written");
                assertTrue(positionsWrites <= intervals + 1, positionsWrites + " writes of the saved positions for 10"
                        + " joins and 10 leaves within " + intervals + " whole sync intervals");
            } finally {
                zk.close();
            }
        }
    }

    /** Two subscription names whose dispatch work is ordered on different executor threads. */
    private static String[] namesOnDifferentThreads(String topic) {
        try (SubscriptionOrderedExecutor probe = SubscriptionOrderedExecutor.builder().name("probe")
                .numThreads(THREADS).build()) {
            int first = probe.threadIndex(SubscriptionKey.of(topic, "area-0"));
            for (int i = 1; ; i++) {
                if (probe.threadIndex(SubscriptionKey.of(topic, "area-" + i)) != first) {
                    return new String[] {"area-0", "area-" + i};
                }
            }
        }
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void broadcastSubscriptionsOnOneTopicAreIndependentAndDispatchOnDifferentThreads() throws Exception {
        String topic = newTopic("two-subs");
        String[] names = namesOnDifferentThreads(topic);
        List<Consumer<String>> first = broadcastConsumers(topic, names[0], 2);
        List<Consumer<String>> second = broadcastConsumers(topic, names[1], 2);
        try (Producer<String> producer = producer(topic)) {
            List<String> sent = publish(producer, "m", 20);
            assertEveryoneReceives(first, sent); // acknowledges everything
            for (Consumer<String> c : second) {
                for (int i = 0; i < 20; i++) {
                    assertEquals(c.receive(30, TimeUnit.SECONDS).getValue(), sent.get(i)); // no acks
                }
            }
            BroadcastDispatcher d0 = dispatcher(topic, names[0]);
            BroadcastDispatcher d1 = dispatcher(topic, names[1]);
            assertNotEquals(d0.dispatchThreadIndex(), d1.dispatchThreadIndex());
            await().atMost(Duration.ofSeconds(10)).until(() -> d0.dispatchThreadName() != null
                    && d1.dispatchThreadName() != null);
            assertNotEquals(d0.dispatchThreadName(), d1.dispatchThreadName());
            await().atMost(Duration.ofSeconds(10)).until(() -> cluster.admin().topics().getStats(topic)
                    .getSubscriptions().get(names[0]).getMsgBacklog() == 0);
            assertEquals(cluster.admin().topics().getStats(topic).getSubscriptions().get(names[1]).getMsgBacklog(),
                    20, "acks on one broadcast subscription do not touch the other");
        } finally {
            closeAll(first);
            closeAll(second);
        }
    }

    private Consumer<String> stock(String topic, String sub, SubscriptionType type, String name) throws Exception {
        return client.newConsumer(Schema.STRING).topic(topic).subscriptionName(sub).subscriptionType(type)
                .consumerName(name).subscribe();
    }

    /** Receives until a second of silence, returning value per consumer. */
    private static List<String> drain(Consumer<String> c) throws Exception {
        List<String> values = new ArrayList<>();
        for (Message<String> m = c.receive(3, TimeUnit.SECONDS); m != null; m = c.receive(1, TimeUnit.SECONDS)) {
            values.add(m.getValue());
            c.acknowledge(m);
        }
        return values;
    }

    @Test(groups = "integration", timeOut = 180_000)
    public void stockSubscriptionTypesOnTheSameTopicBehaveAsBefore() throws Exception {
        String topic = newTopic("mixed");
        List<Consumer<String>> broadcast = broadcastConsumers(topic, "fleet", 2);
        Consumer<String> exclusive = stock(topic, "exclusive", SubscriptionType.Exclusive, "x");
        Consumer<String> shared0 = stock(topic, "shared", SubscriptionType.Shared, "s0");
        Consumer<String> shared1 = stock(topic, "shared", SubscriptionType.Shared, "s1");
        Consumer<String> failover0 = stock(topic, "failover", SubscriptionType.Failover, "f0");
        Consumer<String> failover1 = stock(topic, "failover", SubscriptionType.Failover, "f1");
        Consumer<String> keyShared0 = stock(topic, "key-shared", SubscriptionType.Key_Shared, "k0");
        Consumer<String> keyShared1 = stock(topic, "key-shared", SubscriptionType.Key_Shared, "k1");
        List<Consumer<String>> all = List.of(exclusive, shared0, shared1, failover0, failover1, keyShared0,
                keyShared1);
        try (Producer<String> producer = producer(topic)) {
            List<String> sent = new ArrayList<>();
            Map<String, String> keyOf = new HashMap<>();
            for (int i = 0; i < 40; i++) {
                String v = "m-" + i;
                producer.newMessage().key("k" + (i % 4)).value(v).send();
                sent.add(v);
                keyOf.put(v, "k" + (i % 4));
            }
            assertEveryoneReceives(broadcast, sent);
            assertEquals(drain(exclusive), sent);
            List<String> s0 = drain(shared0);
            List<String> s1 = drain(shared1);
            assertEquals(s0.size() + s1.size(), 40);
            Set<String> union = new HashSet<>(s0);
            union.addAll(s1);
            assertEquals(union, new HashSet<>(sent));
            List<String> f0 = drain(failover0);
            List<String> f1 = drain(failover1);
            assertTrue(f0.equals(sent) && f1.isEmpty() || f1.equals(sent) && f0.isEmpty(),
                    "one active failover consumer gets everything: " + f0.size() + "/" + f1.size());
            List<String> k0 = drain(keyShared0);
            List<String> k1 = drain(keyShared1);
            assertEquals(k0.size() + k1.size(), 40);
            Set<String> keys0 = new HashSet<>();
            k0.forEach(v -> keys0.add(keyOf.get(v)));
            k1.forEach(v -> assertTrue(!keys0.contains(keyOf.get(v)), "key " + keyOf.get(v) + " on both"));
        } finally {
            closeAll(broadcast);
            closeAll(all);
        }
    }

    @Test(groups = "integration", timeOut = 180_000)
    public void partitionedTopicDeliversEveryPartitionInOrder() throws Exception {
        String topic = newTopic("partitioned");
        cluster.admin().topics().createPartitionedTopic(topic, 3);
        List<Consumer<String>> consumers = broadcastConsumers(topic, "fleet", 3);
        try (Producer<String> producer = client.newProducer(Schema.STRING).topic(topic).enableBatching(false)
                .create()) {
            Map<Integer, List<String>> sentByPartition = new HashMap<>();
            for (int i = 0; i < 60; i++) {
                String v = "m-" + i;
                MessageId id = producer.newMessage().key("key-" + i).value(v).send();
                sentByPartition.computeIfAbsent(partition(id), p -> new ArrayList<>()).add(v);
            }
            assertEquals(sentByPartition.size(), 3, "the messages spread over all partitions");
            for (Consumer<String> c : consumers) {
                Map<Integer, List<String>> got = new HashMap<>();
                for (int i = 0; i < 60; i++) {
                    Message<String> m = c.receive(30, TimeUnit.SECONDS);
                    got.computeIfAbsent(partition(m.getMessageId()), p -> new ArrayList<>()).add(m.getValue());
                    c.acknowledge(m);
                }
                assertEquals(got, sentByPartition, "consumer " + c.getConsumerName());
            }
        } finally {
            closeAll(consumers);
        }
    }

    private static int partition(MessageId id) {
        MessageId inner = id instanceof TopicMessageIdImpl ? ((TopicMessageIdImpl) id).getInnerMessageId() : id;
        return ((MessageIdImpl) inner).getPartitionIndex();
    }
}
