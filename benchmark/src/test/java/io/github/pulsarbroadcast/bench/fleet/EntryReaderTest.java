package io.github.pulsarbroadcast.bench.fleet;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertThrows;
import static org.testng.Assert.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.pulsar.common.api.proto.MessageMetadata;
import org.apache.pulsar.common.api.proto.SingleMessageMetadata;
import org.apache.pulsar.common.intercept.AppendBrokerTimestampMetadataInterceptor;
import org.apache.pulsar.common.intercept.BrokerEntryMetadataInterceptor;
import org.apache.pulsar.common.protocol.Commands;
import org.testng.annotations.BeforeMethod;
import org.testng.annotations.Test;

/**
 * {@link EntryReader} on entries built with pulsar-common's own encoders, as a producer and the broker build them:
 * single messages with and without broker entry metadata, a batch, and a corrupted checksum.
 *
 * <p>Threading: the test thread only.
 */
@Test(groups = "unit")
public class EntryReaderTest {

    private static final Set<BrokerEntryMetadataInterceptor> BROKER_TIME =
            Set.of(new AppendBrokerTimestampMetadataInterceptor());

    private final List<long[]> seen = new ArrayList<>();
    private final EntryReader.Sink sink = (seq, eventTime, publish, broker) ->
            seen.add(new long[] {seq, eventTime, publish, broker});

    @BeforeMethod(alwaysRun = true)
    public void forget() {
        seen.clear();
    }

    private static ByteBuf single(long seq, long eventTime, long publishTime) {
        MessageMetadata md = new MessageMetadata().setProducerName("p").setSequenceId(seq)
                .setPublishTime(publishTime).setEventTime(eventTime);
        return Commands.serializeMetadataAndPayload(Commands.ChecksumType.Crc32c, md,
                Unpooled.wrappedBuffer(new byte[100]));
    }

    @Test(timeOut = 10_000)
    public void readsASingleMessageWithItsFields() throws Exception {
        ByteBuf entry = single(7, 123_456_789L, 1_000L);
        assertEquals(new EntryReader().read(entry, sink), 1);
        assertEquals(seen.get(0), new long[] {7, 123_456_789L, 1_000L, -1});
        entry.release();
    }

    @Test(timeOut = 10_000)
    public void readsTheBrokerTimestampInFront() throws Exception {
        ByteBuf entry = Commands.addBrokerEntryMetadata(single(3, 5L, 2_000L), BROKER_TIME);
        new EntryReader().read(entry, sink);
        assertEquals(seen.get(0)[0], 3);
        assertEquals(seen.get(0)[2], 2_000L);
        assertTrue(seen.get(0)[3] > 0, "the broker timestamp is read");
        entry.release();
    }

    @Test(timeOut = 10_000)
    public void countsEveryMessageOfABatch() throws Exception {
        ByteBuf batch = Unpooled.buffer();
        for (int i = 0; i < 4; i++) {
            SingleMessageMetadata smm = new SingleMessageMetadata().setSequenceId(10 + i).setEventTime(100 + i)
                    .setPayloadSize(8);
            Commands.serializeSingleMessageInBatchWithPayload(smm, Unpooled.wrappedBuffer(new byte[8]), batch);
        }
        MessageMetadata md = new MessageMetadata().setProducerName("p").setSequenceId(10).setPublishTime(9L)
                .setNumMessagesInBatch(4);
        ByteBuf entry = Commands.serializeMetadataAndPayload(Commands.ChecksumType.Crc32c, md, batch);
        assertEquals(new EntryReader().read(entry, sink), 4);
        for (int i = 0; i < 4; i++) {
            assertEquals(seen.get(i), new long[] {10 + i, 100 + i, 9L, -1});
        }
        entry.release();
    }

    @Test(timeOut = 10_000)
    public void refusesAnEntryWhoseChecksumDoesNotMatch() {
        ByteBuf entry = single(1, 1L, 1L);
        entry.setByte(entry.writerIndex() - 1, 42); // the payload's last byte
        assertThrows(java.io.IOException.class, () -> new EntryReader().read(entry, sink));
        entry.release();
    }
}
