package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;
import static org.testng.Assert.expectThrows;

import io.github.pulsarbroadcast.broadcast.BroadcastMode;
import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastSubscription;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.mledger.impl.ManagedCursorImpl;
import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.broker.service.persistent.PersistentTopic;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.PulsarClientException.NotAllowedException;
import org.apache.pulsar.client.api.Schema;
import org.testng.annotations.BeforeClass;
import org.testng.annotations.Test;

/**
 * operations.md, "A broadcast subscription that refuses its own consumers after a bookie lost data": when the
 * managed cursor's own ledger is lost, stock 2.10 recovers the cursor with its properties emptied, so the subscription
 * is no longer marked broadcast and its broadcast consumers are refused; marking it again with
 * {@code update-subscription-properties} lets them back in, each at its own saved position. The cursor's ledger is
 * read only when the cursor was not closed (a crash), so the owner is crashed and the topic loaded again by a second
 * broker, after the ledger was deleted from BookKeeper.
 *
 * <p>Threading: TestNG's test thread only.
 */
public class BroadcastLostCursorLedgerTest extends BroadcastTestBase {

    @Override
    protected void configureBroker(ServiceConfiguration conf) {
        conf.getProperties().setProperty("broadcastMarkDeleteIntervalMs", "100");
        conf.getProperties().setProperty("broadcastPositionSyncIntervalMs", "200");
    }

    @BeforeClass(alwaysRun = true)
    public void addSecondBroker() throws Exception {
        cluster.addBroker();
    }

    @Test(groups = "integration", timeOut = 180_000)
    public void markedAgainItServesItsConsumersFromTheirSavedPositions() throws Exception {
        String topic = newTopic("lost-cursor-ledger");
        PulsarClient c = closeAfterTest(PulsarClient.builder().serviceUrl(everyBrokerServiceUrl())
                .maxBackoffInterval(2, TimeUnit.SECONDS).build());
        Producer<String> producer = closeAfterTest(c.newProducer(Schema.STRING).topic(topic).enableBatching(false)
                .create());
        List<String> sent;
        try (Consumer<String> car = subscribe(c, topic)) {
            sent = publish(producer, "m", 10);
            assertEquals(receive(car, 5), sent.subList(0, 5), "car");
            // Its acknowledgements applied (mark-delete past m-4), then a few position saves.
            await().atMost(Duration.ofSeconds(30)).until(() -> brokerSubscription(topic, "fleet").getCursor()
                    .getMarkDeletedPosition().getEntryId() >= 4);
            await().pollDelay(Duration.ofSeconds(1)).until(() -> true);
        }
        producer.close();
        int owner = ownerIndex(topic);
        long cursorLedger = ((ManagedCursorImpl) brokerSubscription(topic, "fleet").getCursor()).getCursorLedger();
        PulsarService other = cluster.brokers().get(1 - owner);
        cluster.crashBroker(owner);
        other.getBookKeeperClient().deleteLedger(cursorLedger);

        NotAllowedException refused = expectThrows(NotAllowedException.class, () -> subscribe(c, topic));
        assertTrue(refused.getMessage().contains("is not a broadcast subscription"), refused.getMessage());
        PersistentTopic loaded = (PersistentTopic) other.getBrokerService().getTopicReference(topic).orElseThrow();
        assertEquals(loaded.getSubscription("fleet").getSubscriptionProperties(), Map.of(),
                "stock recovered the cursor without its properties");

        try (PulsarAdmin admin = PulsarAdmin.builder().serviceHttpUrl(other.getWebServiceAddress()).build()) {
            admin.topics().updateSubscriptionProperties(topic, "fleet", Map.of(BroadcastMode.KEY, "broadcast"));
        }
        try (Consumer<String> car = subscribe(c, topic)) {
            assertTrue(loaded.getSubscription("fleet") instanceof BroadcastSubscription, "served as broadcast");
            assertEquals(receive(car, 5), sent.subList(5, 10), "car resumes after m-4");
        }
    }

    private static Consumer<String> subscribe(PulsarClient c, String topic) throws PulsarClientException {
        return Broadcast.configure(c.newConsumer(Schema.STRING)).topic(topic).subscriptionName("fleet")
                .consumerName("car").subscribe();
    }
}
