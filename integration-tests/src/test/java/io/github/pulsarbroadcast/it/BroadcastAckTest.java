package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;

import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import io.github.pulsarbroadcast.broadcast.cursor.VirtualCursor;
import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastDispatcher;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;
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
        conf.setAcknowledgmentAtBatchIndexLevelEnabled(true);
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
        // Acks sent in the order of the calls (grouped, the client sends them sorted: an audit, forty-sixth session).
        Consumer<String> middle = Broadcast.configure(client.newConsumer(Schema.STRING)).topic(topic)
                .subscriptionName("fleet").consumerName("middle").acknowledgmentGroupTime(0, TimeUnit.MILLISECONDS)
                .subscribe();
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

    /**
     * design.md, "The virtual cursor": with batch-index acknowledgement on at the broker and the client, an ack of part
     * of a batched entry (an ack set) moves nothing; a consumer that comes back before the rest is acknowledged gets
     * the whole entry again; acknowledging every message of it acknowledges the entry.
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void anAckOfPartOfABatchMovesNothing() throws Exception {
        String topic = newTopic("batch-index");
        List<String> sent = new ArrayList<>();
        Consumer<String> car = batchIndexAckingCar(topic);
        MessageId entry;
        try (Producer<String> producer = client.newProducer(Schema.STRING).topic(topic).enableBatching(true)
                .batchingMaxPublishDelay(1, TimeUnit.HOURS).batchingMaxMessages(1_000).create()) {
            List<CompletableFuture<MessageId>> sends = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                sent.add("b-" + i);
                sends.add(producer.sendAsync("b-" + i));
            }
            producer.flush();
            entry = sends.get(9).get(30, TimeUnit.SECONDS);
        }
        PositionImpl before = markDeleted(topic);
        List<Message<String>> got = take(car, 10);
        // Read before the acks (a read-only audit of the tests, forty-sixth session: read after them, the cursor's
        // clause below compared the cursor with itself).
        VirtualCursor cursor = dispatcher(topic, "fleet").member(brokerConsumer(topic, "car")).cursor();
        PositionImpl acknowledged = cursor.acknowledged();
        for (int i = 0; i < 5; i++) {
            car.acknowledge(got.get(i));
        }
        await("nothing moved").during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(10)).until(() ->
                cursor.acknowledged().equals(acknowledged) && cursor.individualAckCount() == 0
                        && markDeleted(topic).equals(before));
        car.close();
        car = batchIndexAckingCar(topic);
        List<Message<String>> again = take(car, 10);
        assertEquals(values(again), sent, "the whole entry again");
        for (Message<String> m : again) {
            car.acknowledge(m);
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> markDeleted(topic).equals(position(entry)));
        car.close();
    }

    /**
     * With batch-index acknowledgement on, the Java client acknowledges cumulatively inside a batch with the entry and
     * an ack set: the entries before it count as acknowledged, as on a stock subscription (its managed cursor marks
     * deleted up to the entry before). Regression (forty-second session, a review): such an ack moved nothing, so
     * the position, the mark-delete and the backlog stood still, and a redelivery sent everything again.
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void aCumulativeAckInsideABatchAcknowledgesTheEntriesBefore() throws Exception {
        String topic = newTopic("batch-cumulative");
        Consumer<String> car = batchIndexAckingCar(topic);
        List<MessageId> lastOfEach = List.of(sendBatch(topic, 0), sendBatch(topic, 1));
        List<Message<String>> got = take(car, 20);
        car.acknowledgeCumulative(got.get(14).getMessageId()); // inside the second entry
        VirtualCursor cursor = dispatcher(topic, "fleet").member(brokerConsumer(topic, "car")).cursor();
        PositionImpl first = position(lastOfEach.get(0));
        await().atMost(Duration.ofSeconds(10)).until(() -> cursor.acknowledged().equals(first)
                && markDeleted(topic).equals(first));
        car.close();
        car = batchIndexAckingCar(topic);
        assertEquals(values(take(car, 10)).get(0), "e1-0", "the second entry again, not the first");
        car.close();
    }

    /**
     * The same in the first entry of a ledger: the entry before is the previous ledger's last, which the broker takes
     * from the ledger's list as stock's cursor does. Regression (forty-third session): such an ack acknowledged
     * nothing.
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void aCumulativeAckInsideALedgersFirstEntryAcknowledgesThePreviousLedgersLast() throws Exception {
        String topic = newTopic("batch-cumulative-ledger");
        batchIndexAckingCar(topic).close(); // away: its position is kept
        MessageId lastOfFirstLedger = sendBatch(topic, 0);
        cluster.admin().topics().unload(topic); // the topic opens a new ledger when it loads again
        MessageId lastOfSecond = sendBatch(topic, 1);
        assertTrue(position(lastOfSecond).getLedgerId() > position(lastOfFirstLedger).getLedgerId()
                && position(lastOfSecond).getEntryId() == 0, "the second batch opens a ledger: " + lastOfSecond);
        Consumer<String> car = batchIndexAckingCar(topic);
        List<Message<String>> got = take(car, 20);
        assertEquals(values(got).get(14), "e1-4");
        car.acknowledgeCumulative(got.get(14).getMessageId());
        VirtualCursor cursor = dispatcher(topic, "fleet").member(brokerConsumer(topic, "car")).cursor();
        PositionImpl first = position(lastOfFirstLedger);
        await().atMost(Duration.ofSeconds(10)).until(() -> cursor.acknowledged().equals(first)
                && markDeleted(topic).equals(first));
        car.close();
    }

    /** Ten messages in one batch (one entry); the last one's id. */
    private MessageId sendBatch(String topic, int batch) throws Exception {
        try (Producer<String> producer = client.newProducer(Schema.STRING).topic(topic).enableBatching(true)
                .batchingMaxPublishDelay(1, TimeUnit.HOURS).batchingMaxMessages(1_000).create()) {
            List<CompletableFuture<MessageId>> sends = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                sends.add(producer.sendAsync("e" + batch + "-" + i));
            }
            producer.flush();
            return sends.get(9).get(30, TimeUnit.SECONDS);
        }
    }

    private Consumer<String> batchIndexAckingCar(String topic) throws Exception {
        return Broadcast.configure(client.newConsumer(Schema.STRING)).topic(topic).subscriptionName("fleet")
                .consumerName("car").enableBatchIndexAcknowledgment(true)
                .acknowledgmentGroupTime(0, TimeUnit.MILLISECONDS).subscribe();
    }

    private org.apache.pulsar.broker.service.Consumer brokerConsumer(String topic, String name) {
        return brokerSubscription(topic, "fleet").getConsumers().stream()
                .filter(c -> c.consumerName().equals(name)).findFirst().orElseThrow();
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void backlogQuotaEvictionMovesLaggardsForward() throws Exception {
        String namespace = "public/eviction-" + System.nanoTime();
        cluster.admin().namespaces().createNamespace(namespace, java.util.Set.of(cluster.clusterName()));
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
            // The quota only now: an eviction moves every consumer behind it, as stock drops the subscription's
            // backlog, and one that ran while "active" was still being sent the messages dropped some of them (6 of
            // 100 in a fresh-clone CI run of the forty-sixth session, the check running every second).
            cluster.admin().namespaces().setBacklogQuota(namespace, BacklogQuota.builder()
                    .limitSize(20 * 1024).retentionPolicy(BacklogQuota.RetentionPolicy.consumer_backlog_eviction)
                    .build());
            // The laggard never acks. The quota check drops the backlog; the laggard's virtual cursor follows.
            BroadcastDispatcher dispatcher = dispatcher(topic, "fleet");
            await().atMost(Duration.ofSeconds(30)).until(() -> dispatcher.counters().consumersSkippedForward() > 0);
            PositionImpl evictedTo = markDeleted(topic);
            assertTrue(evictedTo.compareTo(position(lastId)) <= 0);
            org.apache.pulsar.broker.service.Consumer brokerLaggard = brokerConsumer(topic, "laggard");
            assertTrue(dispatcher.member(brokerLaggard).cursor().acknowledged().compareTo(evictedTo) >= 0);
        } finally {
            closeAll(List.of(active, laggard));
        }
    }
}
