package io.github.pulsarbroadcast.it;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertNotNull;
import static org.testng.Assert.assertTrue;

import io.github.pulsarbroadcast.broadcast.client.Broadcast;
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
import org.apache.pulsar.client.api.SubscriptionType;
import org.apache.pulsar.client.impl.ChunkMessageIdImpl;
import org.testng.annotations.Test;

/**
 * Chunked messages (a producer with {@code enableChunking(true)} splits a message larger than the broker's
 * {@code maxMessageSize} into chunks, one entry each, which the consumer puts back together): broadcast consumers get
 * every message whole and in the order a stock Failover subscription of the same topic gets them, with the chunks of
 * two producers interleaved in the topic, with a receiver queue smaller than a message's chunks, and across a close
 * and a resume by name after individual acks (a chunked message's ack acknowledges each of its chunks; the resumed
 * consumer starts again at the first chunk not acknowledged). Before this test, nothing showed it (forty-second
 * session).
 *
 * <p>Threading: TestNG's test thread, and one publishing thread per producer inside {@link #publishInterleaved}.
 */
public class BroadcastChunkedMessagesTest extends BroadcastTestBase {

    /** The broker's {@code maxMessageSize} here: a message of {@link #BIG} characters is four chunks. */
    private static final int MAX_MESSAGE_SIZE = 8 * 1024;
    private static final int BIG = 3 * MAX_MESSAGE_SIZE + 100;

    @Override
    protected void configureBroker(ServiceConfiguration conf) {
        conf.setMaxMessageSize(MAX_MESSAGE_SIZE);
    }

    @Test(groups = "integration", timeOut = 180_000)
    public void chunkedMessagesArriveWholeAndInTheStockOrder() throws Exception {
        String topic = newTopic("chunked");
        Consumer<String> stock = stockConsumer(topic);
        List<Consumer<String>> fleet = new ArrayList<>(broadcastConsumers(topic, "fleet", 2));
        fleet.add(Broadcast.configure(client.newConsumer(Schema.STRING)).topic(topic).subscriptionName("fleet")
                .consumerName("small-queue").receiverQueueSize(2).subscribe()); // fewer permits than chunks
        fleet.forEach(this::closeAfterTest);

        int published = publishUntilInterleaved(topic, stock);
        List<String> expected = received(stock);
        assertEquals(expected.size(), published, "the stock subscription got every message");
        for (Consumer<String> c : fleet) {
            assertEquals(receiveBrief(c, published), brief(expected),
                    c.getConsumerName() + " against the stock subscription");
        }
    }

    @Test(groups = "integration", timeOut = 180_000)
    public void aConsumerResumedAfterIndividualAcksGetsTheRestWhole() throws Exception {
        String topic = newTopic("chunked-resume");
        Consumer<String> stock = stockConsumer(topic);
        Consumer<String> c0 = broadcastConsumer(topic, "fleet", "c0");
        int published = publishUntilInterleaved(topic, stock);
        List<String> all = received(stock);

        // c0 acknowledges every other message of the first half, then leaves: acked chunks sit between unacked ones.
        List<String> kept = new ArrayList<>();
        for (int i = 0; i < published / 2; i++) {
            Message<String> m = c0.receive(30, TimeUnit.SECONDS);
            assertNotNull(m, "c0 got " + i);
            assertEquals(brief(List.of(m.getValue())), brief(List.of(all.get(i))));
            if (i % 2 == 0) {
                c0.acknowledge(m);
            } else {
                kept.add(m.getValue());
            }
        }
        c0.close();
        List<String> expected = new ArrayList<>(kept);
        expected.addAll(all.subList(published / 2, published));
        Consumer<String> back = closeAfterTest(broadcastConsumer(topic, "fleet", "c0"));
        assertEquals(receiveBrief(back, expected.size()), brief(expected),
                "the resumed consumer: the messages it did not acknowledge, then the rest, each whole");
        assertEquals(back.receive(1, TimeUnit.SECONDS), null, "nothing acknowledged came again");
    }

    private Consumer<String> stockConsumer(String topic) throws Exception {
        return closeAfterTest(client.newConsumer(Schema.STRING).topic(topic).subscriptionName("stock")
                .subscriptionType(SubscriptionType.Failover).subscribe());
    }

    /**
     * Publishes rounds of chunked and small messages from two producers at once until the stock consumer has seen
     * two messages whose chunks interleave in the topic; returns how many were published (at most five rounds).
     * The stock consumer does not acknowledge what it received; {@link #received} replays its subscription.
     */
    private int publishUntilInterleaved(String topic, Consumer<String> stock) throws Exception {
        List<Producer<String>> producers = List.of(chunkingProducer(topic), chunkingProducer(topic));
        int published = 0;
        List<MessageId> ids = new ArrayList<>();
        for (int round = 0; round < 5 && !interleaved(ids); round++) {
            published += publishInterleaved(producers, round);
            while (ids.size() < published) {
                Message<String> m = stock.receive(30, TimeUnit.SECONDS);
                assertNotNull(m, "the stock consumer got " + ids.size() + " of " + published);
                ids.add(m.getMessageId());
            }
        }
        assertTrue(interleaved(ids), "two producers' chunks interleaved in five rounds: " + ids);
        stock.redeliverUnacknowledgedMessages();
        return published;
    }

    private Producer<String> chunkingProducer(String topic) throws Exception {
        return closeAfterTest(client.newProducer(Schema.STRING).topic(topic).enableBatching(false)
                .enableChunking(true).create());
    }

    /** Ten messages from each producer on its own thread, every other one chunked; returns how many were sent. */
    private static int publishInterleaved(List<Producer<String>> producers, int round) throws Exception {
        List<CompletableFuture<Void>> sends = new ArrayList<>();
        for (int p = 0; p < producers.size(); p++) {
            Producer<String> producer = producers.get(p);
            String prefix = "r" + round + "-p" + p + "-";
            sends.add(CompletableFuture.runAsync(() -> {
                for (int i = 0; i < 10; i++) {
                    producer.sendAsync(value(prefix + i, i % 2 == 0 ? BIG : 10));
                }
                producer.flushAsync().join();
            }));
        }
        CompletableFuture.allOf(sends.toArray(new CompletableFuture[0])).get(60, TimeUnit.SECONDS);
        return 10 * producers.size();
    }

    /** {@code name} followed by characters that depend on their place, {@code length} in all. */
    private static String value(String name, int length) {
        StringBuilder b = new StringBuilder(name).append(':');
        for (int i = 0; b.length() < length; i++) {
            b.append((char) ('a' + (i * 7 + name.length()) % 26));
        }
        return b.toString();
    }

    /** Receives and acknowledges {@code n} messages; returns them {@link #brief}. */
    private static List<String> receiveBrief(Consumer<String> consumer, int n) throws Exception {
        List<String> values = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Message<String> m = consumer.receive(30, TimeUnit.SECONDS);
            assertNotNull(m, consumer.getConsumerName() + " got " + i + " of " + n + ": " + brief(values));
            values.add(m.getValue());
            consumer.acknowledge(m);
        }
        return brief(values);
    }

    /** Each value as its name, length and hash: what the assertions compare (a whole value is 24 KiB). */
    private static List<String> brief(List<String> values) {
        List<String> brief = new ArrayList<>();
        for (String v : values) {
            brief.add(v.substring(0, v.indexOf(':')) + "/" + v.length() + "/" + Integer.toHexString(v.hashCode()));
        }
        return brief;
    }

    /** Whether some chunked message's chunks surround another message's first chunk. */
    private static boolean interleaved(List<MessageId> ids) {
        for (MessageId a : ids) {
            if (!(a instanceof ChunkMessageIdImpl)) {
                continue;
            }
            ChunkMessageIdImpl chunked = (ChunkMessageIdImpl) a;
            for (MessageId b : ids) {
                MessageId first = b instanceof ChunkMessageIdImpl
                        ? ((ChunkMessageIdImpl) b).getFirstChunkMessageId() : b;
                if (b != a && chunked.getFirstChunkMessageId().compareTo(first) < 0
                        && first.compareTo(chunked.getLastChunkMessageId()) < 0) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Everything the stock consumer is given again after its redelivery, acknowledged, in order. */
    private static List<String> received(Consumer<String> stock) throws Exception {
        List<String> values = new ArrayList<>();
        Message<String> m = stock.receive(5, TimeUnit.SECONDS);
        while (m != null) {
            String v = m.getValue();
            String name = v.substring(0, v.indexOf(':'));
            assertEquals(v, value(name, v.length()), name + " whole on the stock subscription");
            values.add(v);
            stock.acknowledge(m);
            m = stock.receive(5, TimeUnit.SECONDS);
        }
        return values;
    }
}
