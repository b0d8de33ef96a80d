package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertNull;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionType;
import org.apache.pulsar.client.api.transaction.Transaction;
import org.apache.pulsar.common.policies.data.PersistentTopicInternalStats;
import org.testng.annotations.Test;

/**
 * A topic written with transactions, on a broker with {@code transactionCoordinatorEnabled=true}: broadcast consumers
 * get what a stock Failover subscription on the same topic gets, in the same order: nothing of a transaction before it
 * commits (nor what is published after its first message), nothing of an aborted one, no commit or abort marker; and
 * the markers and aborted messages count as acknowledged, so the mark-delete position reaches the end. Regression
 * (forty-first session): broadcast consumers were sent every message as soon as it was written, the aborted ones and
 * the markers too (design.md, "Transactions").
 *
 * <p>Threading: TestNG's test thread only.
 */
public class BroadcastTransactionsTest extends BroadcastTestBase {

    @Override
    protected void configureBroker(ServiceConfiguration conf) {
        conf.setTransactionCoordinatorEnabled(true);
    }

    @Test(groups = "integration", timeOut = 180_000)
    public void broadcastConsumersGetWhatAStockSubscriptionGets() throws Exception {
        String topic = newTopic("transactions");
        PulsarClient transactional = closeAfterTest(PulsarClient.builder().serviceUrl(cluster.serviceUrl())
                .enableTransaction(true).build());
        Consumer<String> stock = closeAfterTest(client.newConsumer(Schema.STRING).topic(topic)
                .subscriptionName("stock").subscriptionType(SubscriptionType.Failover).subscribe());
        List<Consumer<String>> fleet = broadcastConsumers(topic, "fleet", 2);
        fleet.forEach(this::closeAfterTest);
        Producer<String> producer = closeAfterTest(transactional.newProducer(Schema.STRING).topic(topic)
                .enableBatching(false).sendTimeout(0, TimeUnit.SECONDS).create());

        producer.send("before");
        Transaction committed = newTransaction(transactional);
        producer.newMessage(committed).value("committed-0").send();
        producer.newMessage(committed).value("committed-1").send();
        producer.send("after-open"); // written after the open transaction's first message: held with it
        assertEquals(receiveAll(fleet, stock, 1), List.of("before"), "nothing of the open transaction, nor after it");
        for (Consumer<String> c : fleet) {
            assertNull(c.receive(2, TimeUnit.SECONDS), "nothing past the open transaction");
        }

        committed.commit().get();
        assertEquals(receiveAll(fleet, stock, 3), List.of("committed-0", "committed-1", "after-open"),
                "the transaction once committed, then what followed it");

        Transaction aborted = newTransaction(transactional);
        producer.newMessage(aborted).value("aborted-0").send();
        aborted.abort().get();
        producer.send("last");
        assertEquals(receiveAll(fleet, stock, 1), List.of("last"), "nothing of the aborted transaction");

        PersistentTopicInternalStats stats = cluster.admin().topics().getInternalStats(topic);
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertEquals(
                cluster.admin().topics().getInternalStats(topic).cursors.get("fleet").markDeletePosition,
                stats.lastConfirmedEntry, "the markers and the aborted message count as acknowledged"));
    }

    private static Transaction newTransaction(PulsarClient transactional) throws Exception {
        return transactional.newTransaction().withTransactionTimeout(2, TimeUnit.MINUTES).build().get();
    }

    /**
     * Receives and acknowledges {@code n} messages on the stock consumer and on each broadcast consumer; asserts that
     * every broadcast consumer got what the stock one got, and returns it.
     */
    private static List<String> receiveAll(List<Consumer<String>> fleet, Consumer<String> stock, int n)
            throws Exception {
        List<String> expected = receiveAndAck(stock, n);
        for (Consumer<String> c : fleet) {
            assertEquals(receiveAndAck(c, n), expected, c.getConsumerName() + " against the stock subscription");
        }
        return expected;
    }

    private static List<String> receiveAndAck(Consumer<String> consumer, int n) throws Exception {
        List<String> values = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Message<String> m = consumer.receive(30, TimeUnit.SECONDS);
            if (m == null) {
                break;
            }
            values.add(m.getValue());
            consumer.acknowledge(m);
        }
        return values;
    }
}
