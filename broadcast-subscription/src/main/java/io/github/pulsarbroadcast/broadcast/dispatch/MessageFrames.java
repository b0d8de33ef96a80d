package io.github.pulsarbroadcast.broadcast.dispatch;

import io.netty.buffer.ByteBuf;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.common.allocator.PulsarByteBufAllocator;
import org.apache.pulsar.common.api.proto.BaseCommand;
import org.apache.pulsar.common.api.proto.CommandMessage;
import org.apache.pulsar.common.protocol.Commands;

/**
 * The frame headers of the messages one {@link ConnectionSend} writes, serialized into one buffer:
 * {@code [total size][command size][CommandMessage]} per message, followed on the wire by the entry's bytes, which
 * is Pulsar's frame format for a message sent to a consumer.
 *
 * <p>Why not stock {@code ServerCnx.newMessageAndIntercept}: per message it clears the thread's shared
 * {@link BaseCommand} (a check of every one of its ~60 fields), allocates a pooled buffer for 40-odd bytes, and wraps
 * header and entry in a {@code ByteBufPair} that the pipeline's encoder unwraps again. Here one buffer holds the
 * headers of up to {@value #HEADERS_PER_BUFFER} messages and the command object is reused with only the fields that
 * change (consumer id, message id, epoch); the fields written are those the stock code writes for a first delivery
 * (no redelivery count, no ack set).
 * {@link ConnectionSend} uses it only when the broker runs no other interceptor that would expect
 * {@code onPulsarCommand}/{@code messageDispatched} calls for these messages, and never on a TLS connection.
 *
 * <p>Threading: confined to the event loop running the send; used for one pass, then {@link #release}d.
 */
final class MessageFrames {

    /**
     * Upper bound of one header: two 4-byte sizes, then the command: type (2 bytes), the message field's tag and
     * length (2), consumer id (11), message id with its tag and length (2 + ledger 11 + entry 11 + partition 11),
     * epoch (11). Used to size the buffers; a header that does not fit starts the next buffer.
     */
    static final int MAX_HEADER_BYTES = 8 + 2 + 2 + 11 + 2 + 33 + 11;
    /**
     * Headers per buffer at most: a pass that sends more (a catch-up of many consumers) gets further buffers, so
     * that no single allocation grows with the pass (each stays well inside one pooled chunk).
     */
    static final int HEADERS_PER_BUFFER = 1024;

    private final BaseCommand command = new BaseCommand().setType(BaseCommand.Type.MESSAGE);
    private final int partition;
    /** Headers left to write in this pass, for sizing the next buffer. */
    private int remaining;
    /** The buffer being filled; this object holds one reference to it. */
    private ByteBuf headers;

    MessageFrames(int messages, int partition) {
        this.partition = partition;
        this.remaining = Math.max(1, messages);
        this.headers = nextBuffer();
    }

    private ByteBuf nextBuffer() {
        return PulsarByteBufAllocator.DEFAULT.directBuffer(Math.min(remaining, HEADERS_PER_BUFFER) * MAX_HEADER_BYTES);
    }

    /**
     * Serializes the header of one message of {@code payloadBytes} bytes (the entry as written after it) and returns
     * a new reference to it, which its new owner releases (the connection's composite pass buffer, once written).
     */
    ByteBuf header(long consumerId, PositionImpl position, long consumerEpoch, int payloadBytes) {
        CommandMessage message = command.setMessage().setConsumerId(consumerId);
        message.setMessageId().setLedgerId(position.getLedgerId()).setEntryId(position.getEntryId())
                .setPartition(partition);
        if (consumerEpoch > Commands.DEFAULT_CONSUMER_EPOCH) {
            message.setConsumerEpoch(consumerEpoch);
        } else {
            message.clearConsumerEpoch();
        }
        int commandBytes = command.getSerializedSize();
        if (headers.writableBytes() < 8 + commandBytes) {
            headers.release(); // the headers written so far hold their own references
            headers = nextBuffer();
        }
        remaining = Math.max(1, remaining - 1);
        int start = headers.writerIndex();
        headers.writeInt(4 + commandBytes + payloadBytes);
        headers.writeInt(commandBytes);
        command.writeTo(headers);
        return headers.retainedSlice(start, headers.writerIndex() - start);
    }

    /** Gives back this object's own reference; the buffer is freed once every header written is released. */
    void release() {
        headers.release();
    }
}
