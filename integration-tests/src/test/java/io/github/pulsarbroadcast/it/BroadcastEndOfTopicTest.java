package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;

import java.time.Duration;
import java.util.List;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionType;
import org.testng.annotations.Test;

/**
 * The end of a terminated topic, told as stock Pulsar tells it: a consumer hears "reached the end of the topic" once
 * everything in the topic is acknowledged (stock: its subscription's backlog is empty; a broadcast consumer: its own
 * position), not when the last message was sent to it. The Java client's {@code hasReachedEndOfTopic()} turns true on
 * that command, whatever its receiver queue still holds: a device that reads {@code while
 * (!consumer.hasReachedEndOfTopic())} would otherwise stop with messages it never took. Each case runs on a stock
 * Failover subscription of the same topic first, the reference, then on the broadcast consumer.
 *
 * <p>Threading: the test thread only.
 */
public class BroadcastEndOfTopicTest extends BroadcastTestBase {

    /**
     * Small, so that a consumer that comes back behind the others is served by a catch-up read from storage (the other
     * cases publish at most three messages, which it holds).
     */
    private static final int WINDOW = 5;

    @Override
    protected void configureBroker(ServiceConfiguration conf) {
        conf.getProperties().setProperty("broadcastWindowMaxEntries", String.valueOf(WINDOW));
    }

    /**
     * The end is told once everything is acknowledged, with a tail read that waited when the topic was terminated.
     * Regression (thirty-second session): the plugin never told the end then; stock's own path told every consumer
     * once the slowest had acknowledged everything (here the only one, so this case passed before the fix).
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void theEndIsToldOnceTheConsumerAcknowledgedEverything() throws Exception {
        endToldOnceEverythingIsAcknowledged("end", topic -> { });
    }

    /**
     * The same after the terminated topic was loaded again (an unload; the clients reconnect by themselves): the
     * dispatcher's tail reads return the three messages and then fail at the end. Regression (thirty-second
     * session): the broadcast consumer was told the end when that read failed, with the three messages still in its
     * receiver queue.
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void afterAReloadTheEndIsStillToldOnceTheConsumerAcknowledgedEverything() throws Exception {
        endToldOnceEverythingIsAcknowledged("end-reloaded", topic -> cluster.admin().topics().unload(topic));
    }

    private void endToldOnceEverythingIsAcknowledged(String name, TopicAction afterTermination) throws Exception {
        String topic = newTopic(name);
        Consumer<String> stock = closeAfterTest(client.newConsumer(Schema.STRING).topic(topic)
                .subscriptionName("stock").subscriptionType(SubscriptionType.Failover).consumerName("twin")
                .subscribe());
        Consumer<String> car = closeAfterTest(broadcastConsumer(topic, "fleet", "car"));
        try (Producer<String> producer = producer(topic)) {
            publish(producer, "m", 3);
        }
        cluster.admin().topics().terminateTopic(topic);
        afterTermination.on(topic);
        // Both subscribed on the topic as it is now (after an unload, on the topic loaded again: the client clears
        // its receiver queue before it subscribes again, so what it then holds comes from the new subscribe).
        await("both subscribed").atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() ->
                cluster.admin().topics().getStats(topic).getSubscriptions().get("stock").getConsumers().size() == 1
                        && cluster.admin().topics().getStats(topic).getSubscriptions().get("fleet").getConsumers()
                        .size() == 1);
        for (Consumer<String> consumer : List.of(stock, car)) {
            String who = consumer == stock ? "the stock consumer" : "the broadcast consumer";
            notTheEnd(consumer, who + ", three messages in its receiver queue");
            List<Message<String>> three = take(consumer, 3);
            assertEquals(values(three), List.of("m-0", "m-1", "m-2"), who);
            notTheEnd(consumer, who + ", three messages taken, none acknowledged");
            consumer.acknowledge(three.get(0));
            consumer.acknowledge(three.get(2));
            notTheEnd(consumer, who + ", m-1 not acknowledged");
            consumer.acknowledge(three.get(1));
            await(who + " told the end once everything is acknowledged").atMost(Duration.ofSeconds(30))
                    .until(consumer::hasReachedEndOfTopic);
        }
    }

    /**
     * A consumer that subscribes to a terminated topic with nothing left to receive is told the end at once, whatever
     * the other consumers did: a new stock subscription at the latest position, and a broadcast consumer of a new
     * name (it starts at the tail) beside one with two messages to acknowledge. Regression (thirty-second session):
     * the newcomer was told only once the other had acknowledged everything (stock's path; the tail read had waited
     * when the topic was terminated, and the plugin never found the end).
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void aConsumerJoiningAtTheEndOfATerminatedTopicIsToldAtOnce() throws Exception {
        String topic = newTopic("joined-at-end");
        Consumer<String> first = closeAfterTest(broadcastConsumer(topic, "fleet", "first"));
        try (Producer<String> producer = producer(topic)) {
            publish(producer, "m", 2);
        }
        cluster.admin().topics().terminateTopic(topic);
        Consumer<String> stock = closeAfterTest(client.newConsumer(Schema.STRING).topic(topic)
                .subscriptionName("stock").subscriptionType(SubscriptionType.Failover).subscribe());
        Consumer<String> newcomer = closeAfterTest(broadcastConsumer(topic, "fleet", "newcomer"));
        for (Consumer<String> consumer : List.of(stock, newcomer)) {
            await(consumer.getSubscription() + " told the end").atMost(Duration.ofSeconds(30))
                    .until(consumer::hasReachedEndOfTopic);
        }
        notTheEnd(first, "the first broadcast consumer, two messages not acknowledged");
        assertEquals(receive(first, 2), List.of("m-0", "m-1"));
        await("the first broadcast consumer told the end").atMost(Duration.ofSeconds(30))
                .until(first::hasReachedEndOfTopic);
    }

    /**
     * A consumer behind the window on a terminated topic that was loaded again catches up from storage, as its stock
     * twin does: after a reset to the first message, one consumer replays everything while the other is away; when
     * the other comes back, the first messages are no longer in the window. Regression (thirty-third session, found
     * by {@code StockEquivalenceTest}, seed 4223677443): stock's replay ({@code ManagedCursor.asyncReplayEntries})
     * throws a {@code NullPointerException} on a terminated managed ledger loaded again (it has no current ledger,
     * {@code ManagedLedgerImpl.asyncReadEntry}), the catch-up read that threw stayed "in flight" for ever, and the
     * consumer received nothing.
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void aConsumerBehindTheWindowCatchesUpOnATerminatedTopicLoadedAgain() throws Exception {
        String topic = newTopic("catch-up-after-the-end");
        int n = 3 * WINDOW;
        Consumer<String> stock = closeAfterTest(stockTwin(topic));
        Consumer<String> ahead = closeAfterTest(broadcastConsumer(topic, "fleet", "ahead"));
        Consumer<String> behind = closeAfterTest(broadcastConsumer(topic, "fleet", "behind"));
        MessageId first;
        try (Producer<String> producer = producer(topic)) {
            first = producer.send("m-0");
            publish(producer, "n", n - 1);
        }
        for (Consumer<String> consumer : List.of(stock, ahead, behind)) {
            assertEquals(receive(consumer, n).size(), n);
        }
        stock.close();
        behind.close();
        cluster.admin().topics().terminateTopic(topic);
        cluster.admin().topics().unload(topic);
        for (String subscription : List.of("stock", "fleet")) {
            await("reset " + subscription).atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() ->
                    cluster.admin().topics().resetCursor(topic, subscription, first));
        }
        List<String> all = receive(ahead, n);
        assertEquals(all.get(0), "m-0");
        assertEquals(receive(closeAfterTest(stockTwin(topic)), n), all, "the stock twin, the reference");
        long readBefore = dispatcher(topic, "fleet").counters().catchUpEntriesRead();
        assertEquals(receive(closeAfterTest(broadcastConsumer(topic, "fleet", "behind")), n), all,
                "the broadcast consumer that came back behind the window");
        assertTrue(dispatcher(topic, "fleet").counters().catchUpEntriesRead() >= n - WINDOW + readBefore,
                "served by catch-up reads from storage, not from the window");
    }

    private Consumer<String> stockTwin(String topic) throws Exception {
        return client.newConsumer(Schema.STRING).topic(topic).subscriptionName("stock")
                .subscriptionType(SubscriptionType.Failover).consumerName("twin").subscribe();
    }

    /** Something done to a topic. */
    private interface TopicAction {
        void on(String topic) throws Exception;
    }

    /** {@code consumer} is not told the end within two seconds. */
    private static void notTheEnd(Consumer<String> consumer, String state) {
        await("not the end: " + state).during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5))
                .until(() -> !consumer.hasReachedEndOfTopic());
    }
}
