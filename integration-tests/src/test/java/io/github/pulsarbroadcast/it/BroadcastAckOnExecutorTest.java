package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;

import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;
import org.testng.annotations.Test;

/**
 * {@link BroadcastAckTest}'s tests with {@code broadcastAcksOnEventLoop=false}: every ack command is applied on a
 * random executor thread (NTT's design) instead of the connection's event loop, the default. The connection's gate
 * on acks waiting for the executor ({@code broadcastMaxPendingAcksPerConnection}) is set to 4 here, so that every
 * test below runs through it pausing and resuming the connection's reads, and a flood of acks checks that a gate
 * that bites loses none.
 */
public class BroadcastAckOnExecutorTest extends BroadcastAckTest {

    private static final int PENDING_ACKS = 4;

    @Override
    protected void configureBroker(ServiceConfiguration conf) {
        super.configureBroker(conf);
        conf.getProperties().setProperty("broadcastAcksOnEventLoop", "false");
        conf.getProperties().setProperty("broadcastMaxPendingAcksPerConnection", Integer.toString(PENDING_ACKS));
    }

    /**
     * Three consumers on one connection acknowledge 500 messages each, one ack command per message, without waiting:
     * far more than {@value #PENDING_ACKS} wait for the executor at once, so the connection's reads stop and start
     * again many times; every ack is applied (the subscription's cursor reaches the last message). A gate that did not
     * resume the reads would leave the acks behind it unread. The broker's
     * {@code pulsar_broadcast_ack_read_pauses_total} counts the pauses: none would mean the acks did not go through the
     * executor and its gate at all (as with the key ignored), and the test above would prove nothing about them.
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void aFloodOfAcksThroughASmallGateLosesNone() throws Exception {
        String topic = newTopic("ack-flood");
        List<Consumer<String>> consumers = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            consumers.add(closeAfterTest(Broadcast.configure(client.newConsumer(Schema.STRING).topic(topic)
                    .subscriptionName("fleet").consumerName("c" + i).receiverQueueSize(1_000)
                    .acknowledgmentGroupTime(0, TimeUnit.MILLISECONDS)).subscribe()));
        }
        MessageId last;
        try (Producer<String> producer = producer(topic)) {
            List<CompletableFuture<MessageId>> sends = new ArrayList<>();
            for (int i = 0; i < 500; i++) {
                sends.add(producer.sendAsync("f-" + i));
            }
            last = sends.get(sends.size() - 1).get(30, TimeUnit.SECONDS);
        }
        List<List<Message<String>>> received = new ArrayList<>();
        for (Consumer<String> c : consumers) {
            received.add(take(c, 500));
        }
        List<CompletableFuture<Void>> acks = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            for (int c = 0; c < consumers.size(); c++) {
                acks.add(consumers.get(c).acknowledgeAsync(received.get(c).get(i)));
            }
        }
        CompletableFuture.allOf(acks.toArray(new CompletableFuture[0])).get(30, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertEquals(markDeleted(topic), position(last), "every ack of every consumer applied"));
        double pauses = Scrapes.sum(Scrapes.get(cluster.webServiceUrl(), "/metrics/"),
                "pulsar_broadcast_ack_read_pauses_total");
        assertTrue(pauses > 0, "the acks went through the executor's gate and it paused the reads: " + pauses);
    }
}
