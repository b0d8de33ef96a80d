package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;
import static org.testng.Assert.expectThrows;

import io.github.pulsarbroadcast.broadcast.BroadcastMode;
import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionType;
import org.testng.annotations.Test;

/**
 * The edge cases that issue 10 reproduced against a real broker with a real client, each as it was reported: catch-up
 * reads across a ledger rollover, a stock consumer taking over a broadcast subscription after the topic was
 * reloaded, and an individual ack just above a later cumulative ack; and the recovery window across a graceful move
 * made inside it. Ledgers roll over every 10 entries here.
 */
public class BroadcastEdgeCasesTest extends BroadcastTestBase {

    @Override
    protected void configureBroker(ServiceConfiguration conf) {
        conf.setManagedLedgerMaxEntriesPerLedger(10);
        conf.setManagedLedgerMinLedgerRolloverTimeMinutes(0);
        conf.getProperties().setProperty("broadcastMarkDeleteIntervalMs", "100");
        conf.getProperties().setProperty("broadcastWindowMaxEntries", "20");
    }

    /**
     * Case 1: a consumer that did not receive while 60 messages were published over a ledger rollover catches up
     * through storage; before the fix it got m0..m9 and then a catch-up read of a position past the end of the first
     * ledger failed forever.
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void catchUpReadsCrossALedgerRollover() throws Exception {
        String topic = newTopic("rollover");
        Consumer<String> paused = Broadcast.configure(client.newConsumer(Schema.STRING)).topic(topic)
                .subscriptionName("fleet").consumerName("a").receiverQueueSize(10).subscribe();
        Consumer<String> active = broadcastConsumer(topic, "fleet", "b");
        try (Producer<String> producer = producer(topic)) {
            List<String> sent = new ArrayList<>(publish(producer, "m", 10));
            assertEquals(receive(active, 10), sent);
            for (int i = 10; i < 60; i++) {
                String v = "m-" + i;
                producer.send(v);
                sent.add(v);
            }
            assertEquals(receive(active, 50), sent.subList(10, 60));
            assertTrue(((org.apache.bookkeeper.mledger.impl.ManagedLedgerImpl) brokerTopic(topic).getManagedLedger())
                    .getLedgersInfo().size() > 1, "ledgers rolled over");
            assertEquals(receive(paused, 60), sent, "the paused consumer catches up through the rollover");
        } finally {
            paused.close();
            active.close();
        }
    }

    /**
     * Case 2: after an unload, a consumer without the broadcast key was attached to the subscription that the broker
     * loaded as a plain one, and what it acknowledged was lost for the broadcast consumers. It must be refused
     * whether or not the topic is loaded, also when it names the topic in short form.
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void stockConsumerIsRefusedAfterTheTopicIsReloaded() throws Exception {
        String topic = newTopic("takeover");
        String shortName = topic.substring("persistent://public/default/".length());
        Consumer<String> carA = broadcastConsumer(topic, "fleet", "car-a");
        Consumer<String> carB = broadcastConsumer(topic, "fleet", "car-b");
        List<String> sent;
        try (Producer<String> producer = producer(topic)) {
            sent = publish(producer, "m", 10);
        }
        takeAndAck(carA, 10, 10);
        takeAndAck(carB, 10, 3);
        carA.close();
        carB.close();
        cluster.admin().topics().unload(topic);
        for (String name : List.of(topic, shortName)) {
            PulsarClientException refused = expectThrows(PulsarClientException.class, () -> client
                    .newConsumer(Schema.STRING).topic(name).subscriptionName("fleet")
                    .subscriptionType(SubscriptionType.Failover).consumerName("stock").subscribe());
            assertTrue(refused.getMessage().contains(BroadcastMode.KEY), refused.getMessage());
        }
        Consumer<String> back = broadcastConsumer(topic, "fleet", "car-b");
        try {
            // It resumes at the subscription's mark-delete position (the recovery window after the reload), which
            // is at or before its own: duplicates of m0..m2 are allowed, a loss of m3..m9 is not.
            List<String> got = new ArrayList<>();
            while (got.isEmpty() || !got.get(got.size() - 1).equals("m-9")) {
                got.addAll(receive(back, 1));
            }
            assertTrue(got.size() >= 7, "car-b received " + got);
            assertEquals(got.subList(got.size() - 7, got.size()), sent.subList(3, 10),
                    "car-b still gets what it had not acknowledged, in order: " + got);
            assertEquals(got, sent.subList(10 - got.size(), 10), "a contiguous run ending at m-9: " + got);
        } finally {
            back.close();
        }
    }

    /**
     * Case 3: m6 acknowledged individually, then m5 cumulatively, then m7..m19 individually: the backlog must drain
     * to zero (it stayed at 14 because m6 was never absorbed into the acknowledged position).
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void individualAckJustAboveALaterCumulativeAckDrainsTheBacklog() throws Exception {
        String topic = newTopic("absorb");
        Consumer<String> other = broadcastConsumer(topic, "fleet", "other");
        // Acks sent at once, in the order of the calls: grouped (the client's default, 100 ms) the client sends the
        // cumulative ack first and the individual ones sorted, and the case was never reached (a read-only audit of
        // the tests, forty-sixth session).
        Consumer<String> car = Broadcast.configure(client.newConsumer(Schema.STRING)).topic(topic)
                .subscriptionName("fleet").consumerName("car").acknowledgmentGroupTime(0, TimeUnit.MILLISECONDS)
                .subscribe();
        try (Producer<String> producer = producer(topic)) {
            publish(producer, "m", 20);
            receive(other, 20);
            List<Message<String>> msgs = take(car, 20);
            car.acknowledge(msgs.get(6).getMessageId());
            car.acknowledgeCumulative(msgs.get(5).getMessageId());
            for (int i = 7; i < 20; i++) {
                car.acknowledge(msgs.get(i).getMessageId());
            }
            await().atMost(Duration.ofSeconds(30)).pollInterval(100, TimeUnit.MILLISECONDS).until(() ->
                    cluster.admin().topics().getStats(topic).getSubscriptions().get("fleet").getMsgBacklog() == 0);
        } finally {
            other.close();
            car.close();
        }
    }

    /** Suspect 10: a terminated topic tells its broadcast consumers so, instead of failing reads forever. */
    @Test(groups = "integration", timeOut = 120_000)
    public void consumersOfATerminatedTopicReachItsEnd() throws Exception {
        String topic = newTopic("terminated");
        Consumer<String> car = broadcastConsumer(topic, "fleet", "car");
        try (Producer<String> producer = producer(topic)) {
            List<String> sent = publish(producer, "m", 3);
            assertEquals(receive(car, 3), sent);
        }
        cluster.admin().topics().terminateTopic(topic);
        try {
            await().atMost(Duration.ofSeconds(30)).until(car::hasReachedEndOfTopic);
            // Stock code tells consumers about the end by itself; what the fix removed is the tail read that failed
            // (NoMoreEntriesToRead) and was retried, with a WARN, forever. Its retries back off from 100 ms: within
            // 2 s there would be several.
            await("no read retried after the end").during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(10))
                    .until(() -> dispatcher(topic, "fleet").counters().readFailures() == 0);
        } finally {
            car.close();
        }
    }

    /**
     * Suspect 10: the only connected consumer cannot delete the subscription while another consumer's position is
     * retained for a reconnect (that position holds messages the other consumer has not received).
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void unsubscribeIsRefusedWhileAnotherConsumersPositionIsRetained() throws Exception {
        String topic = newTopic("unsubscribe");
        Consumer<String> stays = broadcastConsumer(topic, "fleet", "stays");
        Consumer<String> away = broadcastConsumer(topic, "fleet", "away");
        away.close();
        expectThrows(PulsarClientException.class, stays::unsubscribe);
        assertTrue(cluster.admin().topics().getSubscriptions(topic).contains("fleet"));
        stays.close();
    }

    /**
     * Found by the process-cluster pause test: on a new owner the topic was loaded (by a producer) without the
     * subscription in its map while the cursor existed, the plugin created the subscription over that cursor as a
     * new one, and every consumer reconnecting from the old owner joined at the tail and lost what was published
     * meanwhile. A cursor that exists means reconnecting consumers: they resume at the mark-delete position.
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void subscriptionOverAnExistingCursorStartsTheRecoveryWindow() throws Exception {
        String topic = newTopic("existing-cursor");
        Consumer<String> car = broadcastConsumer(topic, "fleet", "car");
        List<String> sent;
        try (Producer<String> producer = producer(topic)) {
            sent = new ArrayList<>(publish(producer, "m", 5));
            takeAndAck(car, 5, 2);
            car.close();
            await().atMost(Duration.ofSeconds(30)).until(() -> brokerSubscription(topic, "fleet").getCursor()
                    .getMarkDeletedPosition().getEntryId() >= 1);
            // As on a new owner: the cursor exists, the subscription is not in the topic's map yet.
            io.github.pulsarbroadcast.broadcast.dispatch.BroadcastSubscription old =
                    (io.github.pulsarbroadcast.broadcast.dispatch.BroadcastSubscription)
                            brokerTopic(topic).getSubscriptions().remove("fleet");
            old.broadcastDispatcher().close();
            for (int i = 5; i < 8; i++) {
                producer.send("m-" + i);
                sent.add("m-" + i);
            }
        }
        Consumer<String> back = broadcastConsumer(topic, "fleet", "car");
        try {
            assertEquals(receive(back, 6), sent.subList(2, 8), "it resumes at the mark-delete position, not the tail");
        } finally {
            back.close();
        }
    }

    /**
     * Regression (twenty-ninth session, found by the dispatch model): a topic that moves gracefully inside the
     * recovery window keeps the window for the consumers that are not back yet. The subscription is loaded without
     * its saved positions (lost, as after a crash or an upgrade: the window opens), one consumer comes back, and the
     * topic is unloaded again at once; the consumer that was away comes back after that, with the client's default
     * initial position {@code Latest}, and must get what it had not acknowledged. Before the fix the save made at the
     * second unload was flagged as made on close, the next load opened no window, and it started at the tail.
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void aMoveInsideTheRecoveryWindowKeepsItForConsumersNotBackYet() throws Exception {
        String topic = newTopic("window-move");
        Consumer<String> stays = broadcastConsumer(topic, "fleet", "stays");
        Consumer<String> away = broadcastConsumer(topic, "fleet", "away");
        List<String> sent;
        try (Producer<String> producer = producer(topic)) {
            sent = new ArrayList<>(publish(producer, "m", 5));
            takeAndAck(stays, 5, 5);
            takeAndAck(away, 5, 2);
            await().atMost(Duration.ofSeconds(30)).until(() -> brokerSubscription(topic, "fleet").getCursor()
                    .getMarkDeletedPosition().getEntryId() >= 1);
            closeAll(List.of(stays, away));
            cluster.admin().topics().unload(topic);
            cluster.broker().getLocalMetadataStore()
                    .deleteRecursive(BroadcastDurablePositionsTest.savedPath(topic, "fleet")).get();
            broadcastConsumer(topic, "fleet", "stays").close(); // the window opens: no saved positions
            cluster.admin().topics().unload(topic); // well inside it (60 s)
            sent.addAll(publish(producer, "n", 3));
        }
        Consumer<String> back = broadcastConsumer(topic, "fleet", "away");
        try {
            List<String> got = BroadcastReconnectTest.drain(back);
            assertTrue(!got.isEmpty(), "the consumer that was away came back at the tail: nothing of "
                    + sent.subList(2, sent.size()));
            ResumeChecks.assertResumedWithoutLoss(sent, 2, got, 2);
        } finally {
            back.close();
        }
    }

    /**
     * Regression (twenty-ninth session): a broadcast subscription that the topic's close did not find closes itself
     * once the topic has left the broker. An installation that raced the close (a subscribe, or an admin call's
     * preparation) put it into the topic's map after the close had looked; here it is taken out of the map before the
     * unload, which leaves it in the same state. Before, it kept its positions, its periodic scan and its stats task
     * for as long as the broker ran.
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void aSubscriptionTheTopicsCloseDidNotFindClosesItself() throws Exception {
        String topic = newTopic("orphan");
        broadcastConsumer(topic, "fleet", "car").close();
        io.github.pulsarbroadcast.broadcast.dispatch.BroadcastSubscription orphan =
                (io.github.pulsarbroadcast.broadcast.dispatch.BroadcastSubscription)
                        brokerTopic(topic).getSubscriptions().remove("fleet");
        cluster.admin().topics().unload(topic);
        await().atMost(Duration.ofSeconds(30)).until(() -> orphan.broadcastDispatcher().isClosed());
    }

    /**
     * Suspect 4: the last consumer leaves and another joins before the dispatch thread runs the leave. Stock code takes
     * the managed cursor off the ledger's list of cursors waiting for entries when it sees the subscription without
     * consumers; the tail read the engine had armed then waits for a wake-up that never comes, and the newcomer, which
     * kept the engine from releasing its reads, receives nothing. The dispatch thread is held while car-a closes and
     * car-b subscribes, so that the leave runs after the join's attach, as it does when the thread is busy.
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void lastConsumerLeavingWhileAnotherJoinsKeepsTheTailReadAwake() throws Exception {
        String topic = newTopic("leave-join");
        Consumer<String> carA = broadcastConsumer(topic, "fleet", "car-a");
        Consumer<String> carB = null;
        java.util.concurrent.CountDownLatch hold = new java.util.concurrent.CountDownLatch(1);
        try (Producer<String> producer = producer(topic)) {
            publish(producer, "m", 1);
            takeAndAck(carA, 1, 1);
            java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(1);
            dispatcher(topic, "fleet").runInDispatchOrder(() -> {
                held.countDown();
                awaitUninterruptibly(hold);
            });
            assertTrue(held.await(10, TimeUnit.SECONDS), "the dispatch thread is held");
            carA.close();
            java.util.concurrent.CompletableFuture<Consumer<String>> joining =
                    Broadcast.configure(client.newConsumer(Schema.STRING)).topic(topic).subscriptionName("fleet")
                            .consumerName("car-b").subscribeAsync();
            await().atMost(Duration.ofSeconds(10)).until(() -> dispatcher(topic, "fleet").getConsumers().size() == 1);
            hold.countDown();
            carB = joining.get(30, TimeUnit.SECONDS);
            producer.send("after");
            Message<String> m = carB.receive(10, TimeUnit.SECONDS);
            assertTrue(m != null && m.getValue().equals("after"), "the newcomer receives what is published next: " + m);
        } finally {
            hold.countDown();
            if (carB != null) {
                carB.close();
            }
        }
    }

    private static void awaitUninterruptibly(java.util.concurrent.CountDownLatch latch) {
        try {
            latch.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
