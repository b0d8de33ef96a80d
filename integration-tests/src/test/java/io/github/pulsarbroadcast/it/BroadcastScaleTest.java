package io.github.pulsarbroadcast.it;

import static org.testng.Assert.assertEquals;

import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.testng.annotations.AfterClass;
import org.testng.annotations.Test;

/**
 * 2,000 broadcast consumers on one subscription, spread over several client connections, each receive every
 * message in order. (How fast is the benchmark's business; this only checks that it is right at scale.)
 */
public class BroadcastScaleTest extends BroadcastTestBase {

    private static final int CONSUMERS = 2_000;
    private static final int CLIENTS = 4;
    private static final int MESSAGES = 20;

    private final List<PulsarClient> clients = new ArrayList<>();

    @Test(groups = "integration", timeOut = 300_000)
    public void twoThousandConsumersEachReceiveEveryMessageInOrder() throws Exception {
        String topic = newTopic("scale");
        for (int i = 0; i < CLIENTS; i++) {
            clients.add(newClient());
        }
        List<CompletableFuture<Consumer<String>>> subscribing = new ArrayList<>();
        for (int i = 0; i < CONSUMERS; i++) {
            subscribing.add(Broadcast.configure(clients.get(i % CLIENTS).newConsumer(Schema.STRING)).topic(topic)
                    .subscriptionName("fleet").consumerName("vehicle-" + i).receiverQueueSize(10).subscribeAsync());
        }
        List<Consumer<String>> consumers = new ArrayList<>();
        for (CompletableFuture<Consumer<String>> f : subscribing) {
            consumers.add(f.get(120, TimeUnit.SECONDS));
        }
        assertEquals(dispatcher(topic, "fleet").getConsumers().size(), CONSUMERS);
        try (Producer<String> producer = producer(topic)) {
            List<String> sent = publish(producer, "alert", MESSAGES);
            for (Consumer<String> c : consumers) {
                List<String> got = new ArrayList<>();
                for (int i = 0; i < MESSAGES; i++) {
                    Message<String> m = c.receive(60, TimeUnit.SECONDS);
                    assertEquals(m == null ? null : m.getValue(), sent.get(i), c.getConsumerName() + " after " + got);
                    got.add(m.getValue());
                    c.acknowledge(m);
                }
            }
            assertEquals(dispatcher(topic, "fleet").counters().tailEntriesRead(), MESSAGES, "each entry read once");
        }
    }

    @AfterClass(alwaysRun = true)
    public void closeClients() throws Exception {
        for (PulsarClient c : clients) {
            c.close();
        }
    }
}
