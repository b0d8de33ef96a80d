package io.github.pulsarbroadcast.bench;

import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionType;

/**
 * Takes a newly started broker through every code path a run uses once (topic creation, a stock subscription, a
 * reader, a broadcast subscription when the plugin is there, a non-persistent topic, publish, dispatch, delete), so
 * that the first mode measured on it does not pay the broker's class loading and first-use costs alone.
 *
 * <p>Threading: the main thread; blocking calls only.
 */
final class BrokerPrimer {

    private BrokerPrimer() {
    }

    /** Primes the broker; returns null when it worked, else what went wrong (the run goes on regardless). */
    static String prime(Broker broker, PulsarAdmin admin, BenchSettings s) {
        String base = s.namespace + "/bench-prime-" + System.currentTimeMillis();
        try (PulsarClient client = PulsarClient.builder().serviceUrl(broker.serviceUrl())
                .operationTimeout(60, TimeUnit.SECONDS).build()) {
            primeTopic(client, "persistent://" + base, s.broker == BenchSettings.BrokerKind.PLUGIN);
            primeTopic(client, "non-persistent://" + base, false);
            admin.topics().delete("persistent://" + base, true);
            return null;
        } catch (Exception e) {
            return Errors.brief(e);
        }
    }

    private static void primeTopic(PulsarClient client, String topic, boolean broadcast) throws Exception {
        List<Consumer<byte[]>> consumers = new ArrayList<>();
        consumers.add(client.newConsumer(Schema.BYTES).topic(topic).subscriptionName("prime")
                .subscriptionType(SubscriptionType.Exclusive).subscribe());
        if (broadcast) {
            consumers.add(Broadcast.configure(client.newConsumer(Schema.BYTES)).topic(topic)
                    .subscriptionName("prime-broadcast").consumerName("prime").subscribe());
        }
        try (Reader<byte[]> reader = client.newReader(Schema.BYTES).topic(topic).startMessageId(MessageId.latest)
                .create();
             Producer<byte[]> producer = client.newProducer(Schema.BYTES).topic(topic).enableBatching(false)
                     .create()) {
            producer.newMessage().value(new byte[16]).sequenceId(0).send();
            for (Consumer<byte[]> c : consumers) {
                Message<byte[]> m = c.receive(30, TimeUnit.SECONDS);
                if (m == null) {
                    throw new IllegalStateException("priming message not received on " + topic);
                }
                c.acknowledge(m);
            }
            reader.readNext(30, TimeUnit.SECONDS);
        } finally {
            for (Consumer<byte[]> c : consumers) {
                c.close();
            }
        }
    }
}
