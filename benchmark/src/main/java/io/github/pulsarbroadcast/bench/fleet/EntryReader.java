package io.github.pulsarbroadcast.bench.fleet;

import com.scurrilous.circe.checksum.Crc32cIntChecksum;
import io.netty.buffer.ByteBuf;
import java.io.IOException;
import org.apache.pulsar.common.api.proto.BrokerEntryMetadata;
import org.apache.pulsar.common.api.proto.CompressionType;
import org.apache.pulsar.common.api.proto.MessageMetadata;
import org.apache.pulsar.common.api.proto.SingleMessageMetadata;
import org.apache.pulsar.common.protocol.Commands;

/**
 * Reads the entry of one MESSAGE frame the way the stock Java consumer does, with pulsar-common's own parsers: the
 * broker entry metadata (the broker's publish timestamp) when the broker exposes it, the CRC32C checksum when one is
 * in front (the stock client checks it in the same place, so an entry led by broker metadata goes unchecked there as
 * here), the message metadata, and for a batched entry every single message's metadata. Each message's sequence id,
 * event time (the intended send time), publish time and broker timestamp go to a {@link Sink}.
 *
 * <p>Threading: one instance per event-loop thread (the metadata objects are reused from message to message).
 */
final class EntryReader {

    /** Receives the messages of an entry. Threading: called on the reading thread. */
    interface Sink {
        void message(long sequenceId, long eventTime, long publishTimeMs, long brokerPublishTimeMs);
    }

    private final MessageMetadata metadata = new MessageMetadata();
    private final SingleMessageMetadata single = new SingleMessageMetadata();

    /**
     * Reads {@code headersAndPayload} (positioned after the command) and returns how many messages the entry held.
     *
     * @throws IOException when the checksum does not match, the payload is compressed or the batch is malformed
     */
    int read(ByteBuf headersAndPayload, Sink sink) throws IOException {
        BrokerEntryMetadata broker = Commands.parseBrokerEntryMetadataIfExist(headersAndPayload);
        long brokerTime = broker != null && broker.hasBrokerTimestamp() ? broker.getBrokerTimestamp() : -1;
        if (Commands.hasChecksum(headersAndPayload)) {
            int expected = Commands.readChecksum(headersAndPayload);
            if (expected != Crc32cIntChecksum.computeChecksum(headersAndPayload)) {
                throw new IOException("checksum mismatch");
            }
        }
        Commands.parseMessageMetadata(headersAndPayload, metadata);
        if (metadata.hasCompression() && metadata.getCompression() != CompressionType.NONE) {
            throw new IOException("compressed entries are not supported (" + metadata.getCompression() + ")");
        }
        long publishTime = metadata.getPublishTime();
        if (!metadata.hasNumMessagesInBatch()) {
            sink.message(metadata.getSequenceId(), metadata.getEventTime(), publishTime, brokerTime);
            return 1;
        }
        int n = metadata.getNumMessagesInBatch();
        long firstSequence = metadata.getSequenceId();
        long entryEventTime = metadata.getEventTime();
        for (int i = 0; i < n; i++) {
            ByteBuf payload = Commands.deSerializeSingleMessageInBatch(headersAndPayload, single, i, n);
            payload.release();
            long seq = single.hasSequenceId() ? single.getSequenceId() : firstSequence + i;
            long eventTime = single.hasEventTime() ? single.getEventTime() : entryEventTime;
            sink.message(seq, eventTime, publishTime, brokerTime);
        }
        return n;
    }
}
