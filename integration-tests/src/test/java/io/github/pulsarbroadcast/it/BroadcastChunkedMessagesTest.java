package io.github.pulsarbroadcast.it;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertNotNull;
import static org.testng.Assert.assertTrue;

import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionType;
import org.apache.pulsar.client.impl.ChunkMessageIdImpl;
import org.apache.pulsar.common.api.proto.BaseCommand;
import org.apache.pulsar.common.api.proto.MessageMetadata;
import org.apache.pulsar.common.protocol.ByteBufPair;
import org.apache.pulsar.common.protocol.Commands;
import org.testng.annotations.Test;

/**
 * Chunked messages (a producer with {@code enableChunking(true)} splits a message larger than the broker's
 * {@code maxMessageSize} into chunks, one entry each, which the consumer puts back together): broadcast consumers get
 * every message whole and in the order a stock Failover subscription of the same topic gets them, from a Java producer
 * and with the chunks of two producers interleaved in the topic (written over a raw connection, as the Java client
 * writes them, so that they interleave on every run: left to two Java producers' timing they did not, on the first
 * CI run), with a receiver queue smaller than a message's chunks, and across a close
 * and a resume by name after individual acks (a chunked message's ack acknowledges each of its chunks; the resumed
 * consumer starts again at the first chunk not acknowledged). Before this test, nothing showed it (forty-second
 * session).
 *
 * <p>Threading: TestNG's test thread only.
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

        int published = publishAll(topic, stock);
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
        int published = publishAll(topic, stock);
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
     * Publishes chunked and small messages from a Java producer, then chunked messages of two producers whose chunks
     * alternate in the topic (written over one raw connection, so that they interleave on every run); returns how
     * many were published. The stock consumer receives them all (asserting the interleaving) without acknowledging;
     * {@link #received} replays its subscription.
     */
    private int publishAll(String topic, Consumer<String> stock) throws Exception {
        Producer<String> producer = closeAfterTest(client.newProducer(Schema.STRING).topic(topic)
                .enableBatching(false).enableChunking(true).create());
        for (int i = 0; i < 6; i++) {
            producer.send(value("java-" + i, i % 2 == 0 ? BIG : 10));
        }
        int published = 6 + publishInterleavedChunks(topic, 4);
        List<MessageId> ids = new ArrayList<>();
        while (ids.size() < published) {
            Message<String> m = stock.receive(30, TimeUnit.SECONDS);
            assertNotNull(m, "the stock consumer got " + ids.size() + " of " + published);
            ids.add(m.getMessageId());
        }
        assertTrue(interleaved(ids), "two producers' chunks interleaved: " + ids);
        stock.redeliverUnacknowledgedMessages();
        return published;
    }

    /**
     * {@code perProducer} messages of {@value #BIG} characters from each of two producers, four chunks each, written
     * over one raw connection as the Java client writes a chunk (pulsar-common's commands, the same metadata), the
     * two producers' chunks alternating; returns how many messages.
     */
    private int publishInterleavedChunks(String topic, int perProducer) throws Exception {
        try (RawProtocolConnection c = RawProtocolConnection.connected(cluster.serviceUrl())) {
            String[] names = {"raw-a", "raw-b"};
            for (int p = 0; p < 2; p++) {
                c.send(Commands.newProducer(topic, p, p, names[p], Map.of(), false));
                assertEquals(c.next().getType(), BaseCommand.Type.PRODUCER_SUCCESS, names[p]);
            }
            for (int i = 0; i < perProducer; i++) {
                byte[][] values = new byte[2][];
                for (int p = 0; p < 2; p++) {
                    values[p] = value(names[p] + "-" + i, BIG).getBytes(StandardCharsets.UTF_8);
                }
                int chunk = (BIG + 3) / 4;
                for (int k = 0; k < 4; k++) {
                    for (int p = 0; p < 2; p++) {
                        sendChunk(c, p, names[p], i, k, values[p], chunk);
                    }
                }
            }
            for (int n = 0; n < 2 * perProducer * 4; n++) {
                assertEquals(c.next().getType(), BaseCommand.Type.SEND_RECEIPT, "receipt " + n);
            }
        }
        return 2 * perProducer;
    }

    private static void sendChunk(RawProtocolConnection c, long producerId, String producer, long sequenceId,
                                  int chunkId, byte[] value, int chunk) throws Exception {
        MessageMetadata metadata = new MessageMetadata().setProducerName(producer).setSequenceId(sequenceId)
                .setPublishTime(System.currentTimeMillis()).setUuid(producer + "-" + sequenceId).setChunkId(chunkId)
                .setNumChunksFromMsg(4).setTotalChunkMsgSize(value.length).setUncompressedSize(value.length);
        int from = chunkId * chunk;
        ByteBufPair send = Commands.newSend(producerId, sequenceId, 1, Commands.ChecksumType.Crc32c, metadata,
                Unpooled.wrappedBuffer(value, from, Math.min(chunk, value.length - from)));
        try {
            c.send(ByteBufPair.coalesce(send));
        } finally {
            send.release();
        }
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
