package io.github.pulsarbroadcast.it;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertNotNull;

import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastDispatcher;
import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastSubscription;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.broker.service.Topic;
import org.apache.pulsar.broker.service.persistent.PersistentSubscription;
import org.apache.pulsar.broker.service.persistent.PersistentTopic;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.common.naming.TopicName;
import org.testng.annotations.AfterMethod;

/**
 * Helpers for broadcast tests on the shared real cluster of {@link BrokerTestBase}: broadcast consumers built with
 * the shipped Java helper, publishing, and receiving in order.
 *
 * <p>Threading: TestNG's test thread only.
 */
public abstract class BroadcastTestBase extends BrokerTestBase {

    /** What {@link #closeAfterTest} registered; test thread only. */
    private final List<AutoCloseable> closeAfterTest = new ArrayList<>();

    /** A broadcast consumer named {@code name} on {@code topic}/{@code subscription}. */
    protected Consumer<String> broadcastConsumer(String topic, String subscription, String name)
            throws PulsarClientException {
        return Broadcast.configure(client.newConsumer(Schema.STRING))
                .topic(topic).subscriptionName(subscription).consumerName(name).subscribe();
    }

    protected List<Consumer<String>> broadcastConsumers(String topic, String subscription, int count)
            throws PulsarClientException {
        List<Consumer<String>> consumers = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            consumers.add(broadcastConsumer(topic, subscription, "c" + i));
        }
        return consumers;
    }

    protected Producer<String> producer(String topic) throws PulsarClientException {
        return client.newProducer(Schema.STRING).topic(topic).enableBatching(false).create();
    }

    /** Sends {@code prefix-0 .. prefix-(n-1)} and returns them. */
    protected static List<String> publish(Producer<String> producer, String prefix, int n)
            throws PulsarClientException {
        List<String> sent = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String value = prefix + "-" + i;
            producer.send(value);
            sent.add(value);
        }
        return sent;
    }

    /** Receives exactly {@code n} messages without acknowledging them. */
    protected static List<Message<String>> take(Consumer<String> consumer, int n) throws PulsarClientException {
        List<Message<String>> messages = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Message<String> msg = consumer.receive(30, TimeUnit.SECONDS);
            assertNotNull(msg, consumer.getConsumerName() + " got " + i + " of " + n + " messages");
            messages.add(msg);
        }
        return messages;
    }

    /** Receives {@code n} messages and acknowledges the first {@code ack} of them cumulatively. */
    protected static List<Message<String>> takeAndAck(Consumer<String> consumer, int n, int ack)
            throws PulsarClientException {
        List<Message<String>> messages = take(consumer, n);
        if (ack > 0) {
            consumer.acknowledgeCumulative(messages.get(ack - 1).getMessageId());
        }
        return messages;
    }

    protected static List<String> values(List<Message<String>> messages) {
        List<String> values = new ArrayList<>();
        messages.forEach(m -> values.add(m.getValue()));
        return values;
    }

    /** Receives exactly {@code n} messages (acknowledging each) and returns their values in arrival order. */
    protected static List<String> receive(Consumer<String> consumer, int n) throws PulsarClientException {
        List<String> values = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Message<String> msg = consumer.receive(30, TimeUnit.SECONDS);
            assertNotNull(msg, consumer.getConsumerName() + " got " + i + " of " + n + " messages: " + values);
            values.add(msg.getValue());
            consumer.acknowledge(msg);
        }
        return values;
    }

    /** Asserts that every consumer receives exactly {@code expected}, in order. */
    protected static void assertEveryoneReceives(List<Consumer<String>> consumers, List<String> expected)
            throws PulsarClientException {
        for (Consumer<String> c : consumers) {
            assertEquals(receive(c, expected.size()), expected, "consumer " + c.getConsumerName());
        }
    }

    /** Which of the cluster's brokers owns {@code topic} (its index in {@code cluster.brokers()}). */
    protected int ownerIndex(String topic) throws Exception {
        String owner = cluster.admin().lookups().lookupTopic(topic);
        for (int i = 0; i < cluster.brokers().size(); i++) {
            if (owner.equals(cluster.brokers().get(i).getBrokerServiceUrl())) {
                return i;
            }
        }
        throw new AssertionError("owner " + owner + " is none of the brokers");
    }

    /**
     * The broker's object of {@code topic}: on the broker that has it loaded and owns its bundle (with several
     * brokers, after a move it is another one than the first), else the first broker's (which throws when it is not
     * loaded there).
     */
    protected PersistentTopic brokerTopic(String topic) {
        TopicName name = TopicName.get(topic);
        for (PulsarService broker : cluster.brokers()) {
            Optional<Topic> loaded = broker.getBrokerService().getTopicReference(topic);
            if (loaded.isPresent() && ownsBundle(broker, name)) {
                return (PersistentTopic) loaded.get();
            }
        }
        return (PersistentTopic) cluster.broker().getBrokerService().getTopicReference(topic).orElseThrow();
    }

    private static boolean ownsBundle(PulsarService broker, TopicName name) {
        try {
            return broker.getNamespaceService().isServiceUnitActiveAsync(name).get(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (ExecutionException | TimeoutException e) {
            return false;
        }
    }

    protected PersistentSubscription brokerSubscription(String topic, String subscription) {
        return brokerTopic(topic).getSubscription(subscription);
    }

    protected BroadcastDispatcher dispatcher(String topic, String subscription) {
        return ((BroadcastSubscription) brokerSubscription(topic, subscription)).broadcastDispatcher();
    }

    /** The dispatcher of {@code subscription} on broker {@code broker} (its index in {@code cluster.brokers()}). */
    protected BroadcastDispatcher dispatcherOn(int broker, String topic, String subscription) {
        PersistentTopic t = (PersistentTopic) cluster.brokers().get(broker).getBrokerService()
                .getTopicReference(topic).orElseThrow();
        return ((BroadcastSubscription) t.getSubscription(subscription)).broadcastDispatcher();
    }

    /** Closes {@code closeable} after the current test method, in reverse order of registration; returns it. */
    protected <T extends AutoCloseable> T closeAfterTest(T closeable) {
        closeAfterTest.add(closeable);
        return closeable;
    }

    @AfterMethod(alwaysRun = true)
    public void closeTestResources() {
        for (int i = closeAfterTest.size() - 1; i >= 0; i--) {
            try {
                closeAfterTest.get(i).close();
            } catch (Exception e) {
                // best effort: the cluster goes away next
            }
        }
        closeAfterTest.clear();
    }

    protected static void closeAll(List<? extends AutoCloseable> closeables) throws Exception {
        for (AutoCloseable c : closeables) {
            c.close();
        }
    }
}
