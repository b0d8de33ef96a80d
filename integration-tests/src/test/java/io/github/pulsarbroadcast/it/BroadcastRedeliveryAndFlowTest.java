package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertNotNull;
import static org.testng.Assert.assertNull;
import static org.testng.Assert.assertTrue;

import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastDispatcher;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;
import org.testng.annotations.Test;

/**
 * design.md, "The virtual cursor" (redelivery) and "The dispatcher" (window, catch-up reads): redelivery rewinds
 * only the consumer that asked; a consumer without permits never stalls the
 * others and catches up from older entries, in order, sharing storage reads with consumers at the same position.
 */
public class BroadcastRedeliveryAndFlowTest extends BroadcastTestBase {

    /** Small, so that a paused consumer falls out of the window and catches up from storage. */
    private static final int WINDOW = 10;

    @Override
    protected void configureBroker(ServiceConfiguration conf) {
        conf.getProperties().setProperty("broadcastWindowMaxEntries", String.valueOf(WINDOW));
        conf.getProperties().setProperty("broadcastMaxReadBatchSize", "20");
    }

    private Consumer<String> consumer(String topic, String name, int queue) throws Exception {
        return Broadcast.configure(client.newConsumer(Schema.STRING)).topic(topic).subscriptionName("fleet")
                .consumerName(name).receiverQueueSize(queue)
                .negativeAckRedeliveryDelay(100, TimeUnit.MILLISECONDS).subscribe();
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void negativeAckRedeliversToThatConsumerOnly() throws Exception {
        String topic = newTopic("nack");
        Consumer<String> nacker = consumer(topic, "nacker", 100);
        Consumer<String> other = consumer(topic, "other", 100);
        try (Producer<String> producer = producer(topic)) {
            List<String> sent = publish(producer, "m", 5);
            assertEquals(receive(other, 5), sent);
            List<Message<String>> got = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                got.add(nacker.receive(30, TimeUnit.SECONDS));
            }
            nacker.acknowledgeCumulative(got.get(1).getMessageId());
            nacker.negativeAcknowledge(got.get(2));
            // Failover consumers rewind as a whole: everything after the acknowledged position comes again, in order.
            assertEquals(receive(nacker, 3), sent.subList(2, 5));
            assertNull(other.receive(1, TimeUnit.SECONDS), "the other consumer must not see redeliveries");
        } finally {
            closeAll(List.of(nacker, other));
        }
    }

    /**
     * A negative acknowledgement over a hole (the first and third of three acknowledged) redelivers the second alone,
     * whatever the receiver queue: with a queue of 1 a stock Failover consumer got the acknowledged third again in
     * StockEquivalenceTest (seed 3828905972, design.md; in this test's timing it does not), which an acknowledged
     * message must not be. Fails with the individual acknowledgements not consulted on a redelivery.
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void aNegativeAckOverAHoleRedeliversOnlyTheUnacknowledgedWithAnyReceiverQueue() throws Exception {
        for (int queue : new int[] {1, 2, 1000}) {
            String topic = newTopic("nack-hole");
            try (Consumer<String> c = Broadcast.configure(client.newConsumer(Schema.STRING)).topic(topic)
                    .subscriptionName("fleet").consumerName("car").receiverQueueSize(queue)
                    .acknowledgmentGroupTime(0, TimeUnit.MILLISECONDS)
                    .negativeAckRedeliveryDelay(100, TimeUnit.MILLISECONDS).subscribe();
                 Producer<String> producer = producer(topic)) {
                List<String> sent = publish(producer, "m", 3);
                List<Message<String>> three = take(c, 3);
                c.acknowledge(three.get(0));
                c.negativeAcknowledge(three.get(1));
                c.acknowledge(three.get(2));
                assertEquals(receive(c, 1), sent.subList(1, 2), "queue " + queue);
                Message<String> more = c.receive(2, TimeUnit.SECONDS);
                assertNull(more, "queue " + queue + ": " + (more == null ? "" : more.getValue()) + " came again");
            }
        }
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void ackTimeoutRedelivers() throws Exception {
        String topic = newTopic("ack-timeout");
        try (Consumer<String> c = Broadcast.configure(client.newConsumer(Schema.STRING)).topic(topic)
                .subscriptionName("fleet").consumerName("slow").ackTimeout(1, TimeUnit.SECONDS).subscribe();
             Producer<String> producer = producer(topic)) {
            List<String> sent = publish(producer, "m", 3);
            for (int i = 0; i < 3; i++) {
                assertNotNull(c.receive(30, TimeUnit.SECONDS)); // received, never acknowledged
            }
            assertEquals(receive(c, 3), sent, "redelivered after the ack timeout");
        }
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void explicitRedeliverRewindsToTheAcknowledgedPosition() throws Exception {
        String topic = newTopic("redeliver");
        try (Consumer<String> c = consumer(topic, "r", 100); Producer<String> producer = producer(topic)) {
            List<String> sent = publish(producer, "m", 4);
            Message<String> first = c.receive(30, TimeUnit.SECONDS);
            c.acknowledge(first);
            for (int i = 1; i < 4; i++) {
                assertNotNull(c.receive(30, TimeUnit.SECONDS));
            }
            c.redeliverUnacknowledgedMessages();
            assertEquals(receive(c, 3), sent.subList(1, 4));
        }
    }

    @Test(groups = "integration", timeOut = 180_000)
    public void pausedConsumerDoesNotStallOthersAndCatchesUpInOrder() throws Exception {
        String topic = newTopic("pause");
        int total = 200;
        Consumer<String> paused = consumer(topic, "paused", 5);
        List<Consumer<String>> active = List.of(consumer(topic, "active-0", 1000), consumer(topic, "active-1", 1000));
        try (Producer<String> producer = producer(topic)) {
            paused.pause();
            List<String> sent = publish(producer, "m", total);
            // The active consumers get everything while the paused one holds no permits.
            assertEveryoneReceives(active, sent);
            BroadcastDispatcher dispatcher = dispatcher(topic, "fleet");
            assertEquals(dispatcher.counters().catchUpEntriesRead(), 0, "nobody needed a catch-up read yet");
            paused.resume();
            assertEquals(receive(paused, total), sent);
            // It had 5 messages (its queue) before the pause; the window held the last WINDOW entries.
            assertTrue(dispatcher.counters().catchUpEntriesRead() >= total - 5 - WINDOW, "it caught up from storage: "
                    + dispatcher.counters().catchUpEntriesRead());
            assertEquals(dispatcher.counters().tailEntriesRead(), total, "each entry read once at the tail");
        } finally {
            paused.close();
            closeAll(active);
        }
    }

    /** Two consumers catching up from the same position are served by the same storage reads. */
    @Test(groups = "integration", timeOut = 180_000)
    public void consumersAtTheSamePositionShareCatchUpReads() throws Exception {
        String topic = newTopic("share");
        int total = 400;
        try (Consumer<String> keeper = consumer(topic, "keeper", 1000); Producer<String> producer = producer(topic)) {
            List<String> sent = publish(producer, "m", total);
            // Every entry read at the tail first (for the keeper): the window then holds exactly the last WINDOW
            // entries, and everything below them reaches the late consumers only through catch-up reads. Joining
            // while the tail reads still ran let some entries reach them at the tail instead (a CI run on
            // 2026-11-27 counted 381 catch-up entries where the assertion below wants at least 390).
            BroadcastDispatcher dispatcher = dispatcher(topic, "fleet");
            await().atMost(Duration.ofSeconds(30)).until(() -> dispatcher.counters().tailEntriesRead() == total);
            // Two consumers join together at the subscription's retained start (the keeper has acked nothing). The
            // dispatch thread is held until both are attached, so that both joins run in one turn: subscribed one after
            // the other, the first could start catching up before the second joined, and the two then read apart (a
            // run on 2026-11-28 counted 670 catch-up entries, about two full passes). A flow that arrives after the
            // release still finds the other consumer's first read in flight from the same start (a few tens of
            // entries read twice at most).
            CountDownLatch hold = new CountDownLatch(1);
            CountDownLatch held = new CountDownLatch(1);
            java.util.concurrent.CompletableFuture<Consumer<String>> a;
            java.util.concurrent.CompletableFuture<Consumer<String>> b;
            try {
                dispatcher.runInDispatchOrder(() -> {
                    held.countDown();
                    try {
                        hold.await(60, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                assertTrue(held.await(10, TimeUnit.SECONDS), "the dispatch thread is held");
                a = Broadcast.configure(client.newConsumer(Schema.STRING)).topic(topic).subscriptionName("fleet")
                        .consumerName("late-a")
                        .subscriptionInitialPosition(org.apache.pulsar.client.api.SubscriptionInitialPosition.Earliest)
                        .subscribeAsync();
                b = Broadcast.configure(client.newConsumer(Schema.STRING)).topic(topic).subscriptionName("fleet")
                        .consumerName("late-b")
                        .subscriptionInitialPosition(org.apache.pulsar.client.api.SubscriptionInitialPosition.Earliest)
                        .subscribeAsync();
                await().atMost(Duration.ofSeconds(30)).until(() -> dispatcher.getConsumers().size() == 3);
            } finally {
                hold.countDown();
            }
            try (Consumer<String> lateA = a.get(); Consumer<String> lateB = b.get()) {
                assertEquals(receive(lateA, total), sent);
                assertEquals(receive(lateB, total), sent);
                long behind = total - WINDOW;
                long reads = dispatcher.counters().catchUpEntriesRead();
                assertTrue(reads >= behind, "they needed storage reads: " + reads);
                assertTrue(reads < behind * 3 / 2, "consumers at the same position share reads: " + reads);
            }
        }
    }
}
