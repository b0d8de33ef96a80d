package io.github.pulsarbroadcast.bench.fleet;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import org.apache.pulsar.common.api.proto.BaseCommand;
import org.apache.pulsar.common.api.proto.CommandAck;
import org.apache.pulsar.common.api.proto.CommandAck.AckType;
import org.apache.pulsar.common.api.proto.CommandFlow;

/**
 * The ACK and FLOW commands one connection writes while it handles a read, gathered in one buffer: each command is
 * serialized by pulsar-common's own {@link BaseCommand} and framed as {@code Commands.serializeWithSize} frames it
 * (total size, command size, command), so the bytes on the wire are exactly those of {@code Commands.newAck} and
 * {@code Commands.newFlow} one after the other (a contract test compares them); only the buffer, the write and the
 * flush are shared. Acks are still one command per message, as a real client writes them.
 *
 * <p>Each kind of command has its own {@link BaseCommand}, set to its type once: an ack clears and fills only the
 * nested {@link CommandAck} (not the envelope's ~60 fields), and the frame's two sizes are written after the
 * command from what {@code writeTo} returns (no second walk over those fields for {@code getSerializedSize});
 * experiment F9 in docs/benchmarks.md.
 *
 * <p>Threading: used by its connection's event loop only; the buffer is handed over (and forgotten) by {@link #take}.
 */
final class CommandBatch {

    /** Room for about 2,000 acks before the buffer grows (an ack frame is about 30 bytes). */
    static final int READ_BATCH_CAPACITY = 64 * 1024;
    /** Room for one command (an ack or a flow), for a batch taken after every command. */
    static final int ONE_COMMAND_CAPACITY = 64;

    private final BaseCommand ackCommand = new BaseCommand().setType(BaseCommand.Type.ACK);
    private final CommandAck ack = ackCommand.setAck();
    private final BaseCommand flowCommand = new BaseCommand().setType(BaseCommand.Type.FLOW);
    private final CommandFlow flow = flowCommand.setFlow();
    private final ByteBufAllocator allocator;
    private final int initialCapacity;
    private ByteBuf buffer;

    /** A batch whose buffer starts with {@code initialCapacity} bytes and grows as commands are appended. */
    CommandBatch(ByteBufAllocator allocator, int initialCapacity) {
        this.allocator = allocator;
        this.initialCapacity = initialCapacity;
    }

    /** Appends an ACK of one entry, individual or cumulative, without a request id (what the stock client sends). */
    void ack(long consumerId, long ledgerId, long entryId, boolean cumulative) {
        ack.clear().setConsumerId(consumerId).setAckType(cumulative ? AckType.Cumulative : AckType.Individual);
        ack.addMessageId().setLedgerId(ledgerId).setEntryId(entryId);
        append(ackCommand);
    }

    /** Appends a FLOW of {@code permits} for {@code consumerId}. */
    void flow(long consumerId, int permits) {
        flow.clear().setConsumerId(consumerId).setMessagePermits(permits);
        append(flowCommand);
    }

    boolean isEmpty() {
        return buffer == null;
    }

    /** The commands gathered so far (the caller writes and releases them), or null; the batch starts empty again. */
    ByteBuf take() {
        ByteBuf out = buffer;
        buffer = null;
        return out;
    }

    /** Drops what was gathered (the connection closed). */
    void discard() {
        if (buffer != null) {
            buffer.release();
            buffer = null;
        }
    }

    /** Frames {@code command}: its two sizes (total, command) go in front once it is written. */
    private void append(BaseCommand command) {
        if (buffer == null) {
            buffer = allocator.directBuffer(initialCapacity);
        }
        int start = buffer.writerIndex();
        buffer.writeLong(0); // the sizes' place
        int size = command.writeTo(buffer);
        buffer.setInt(start, 4 + size);
        buffer.setInt(start + 4, size);
    }
}
