package io.github.pulsarbroadcast.broadcast.dispatch;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.common.api.proto.BaseCommand;
import org.apache.pulsar.common.api.proto.CommandMessage;
import org.apache.pulsar.common.protocol.Commands;

/**
 * The bytes of the messages one {@link ConnectionSend} writes, in Pulsar's frame format for a message sent to a
 * consumer: {@code [total size][command size][CommandMessage]} per message, then the entry's bytes.
 *
 * <p>Two layouts. <b>Copied</b> (when the connection is writable, the entry is at most {@link #COPY_LIMIT} bytes
 * and the pass's copies, this one included, stay within its {@link #copyBudget budget}): the entry's bytes are
 * copied after the header into the same buffer, so that a connection's pass is usually one contiguous buffer: one
 * write through the pipeline, one address for the kernel, no reference count taken per message (experiment 8 in
 * docs/benchmarks.md). <b>Shared</b> (otherwise: an entry over the limit, a connection whose outbound buffer is
 * already above Netty's high-water mark, or the rest of a pass past the budget, such as a large catch-up): the
 * header stays in the current buffer, which goes out as a slice, and a duplicate of the entry's bytes follows by
 * reference. So a pass copies at most its budget (a tail pass, one entry per consumer, fits whole), a slow
 * connection gets no copies at all, and large entries are never copied per consumer. Several parts go out as one
 * composite buffer.
 *
 * <p>Why not stock {@code ServerCnx.newMessageAndIntercept}: per message it clears the thread's shared
 * {@link BaseCommand} (a check of every one of its ~60 fields), allocates a pooled buffer for 40-odd bytes, and wraps
 * header and entry in a {@code ByteBufPair} that the pipeline's encoder unwraps again. Here the command object is
 * reused with only the fields that change (consumer id, message id, epoch); the fields written are those the stock
 * code writes for a first delivery (no redelivery count, no ack set). {@link ConnectionSend} uses it only when the
 * broker runs no other interceptor that would expect {@code onPulsarCommand}/{@code messageDispatched} calls for
 * these messages, and never on a TLS connection.
 *
 * <p>Threading: confined to the event loop running the send; used for one pass: {@link #finish} hands the frames
 * over, {@link #release} frees whatever was not handed over.
 */
final class MessageFrames {

    /**
     * Upper bound of one header: two 4-byte sizes, then the command: type (2 bytes), the message field's tag and
     * length (2), consumer id (11), message id with its tag and length (2 + ledger 11 + entry 11 + partition 11),
     * epoch (11). Used to size the buffers, and {@link #add} reserves it before it writes a command whose size it
     * learns only from {@code writeTo}: it must stay an upper bound of every command this class writes (a field
     * added to {@link #prepareCommand} must be counted here; {@code MessageFramesTest} checks the bound with extreme
     * values).
     */
    static final int MAX_HEADER_BYTES = 8 + 2 + 2 + 11 + 2 + 33 + 11;
    /** Entries up to this size are copied after their header; larger ones are shared by reference. */
    static final int COPY_LIMIT = 16 * 1024;
    /** The smallest copy budget of a pass, whatever its number of consumers. */
    static final int COPY_BUDGET = 256 * 1024;
    /** Budget per consumer of the pass: a tail pass (one entry of up to 2 KB per consumer) is copied whole. */
    static final int COPY_PER_CONSUMER = 2 * 1024;

    /**
     * Bytes of entries a pass to {@code consumers} consumers copies at most; the rest of the pass is shared. Bounds
     * the memory a pass adds on top of the shared entries: a tail pass of 100 consumers x 1 KB copies about 100 KB,
     * but a catch-up of 100 consumers x 1,000 permits of 1 KB entries would otherwise copy 100 MB.
     */
    static int copyBudget(int consumers) {
        return (int) Math.min(Integer.MAX_VALUE, Math.max(COPY_BUDGET, (long) consumers * COPY_PER_CONSUMER));
    }

    /**
     * Capacity of one buffer at most (unless a single frame needs more): a pass that sends more (a catch-up of many
     * consumers) gets further buffers, so that no single allocation grows with the pass.
     */
    static final int BUFFER_BYTES = 256 * 1024;

    private final ByteBufAllocator alloc;
    private final BaseCommand command = new BaseCommand().setType(BaseCommand.Type.MESSAGE);
    private final int partition;
    /** Bytes of entries this pass may still copy (none when the connection is not writable). */
    private int copyBudget;
    /** Frames left to add in this pass, for sizing the next buffer. */
    private int remaining;
    /** The buffer being filled, or null; this object holds one reference to it. */
    private ByteBuf current;
    /** Where the bytes of {@link #current} not yet handed to {@link #done} start. */
    private int pendingStart;
    /** The parts finished so far: null, one buffer, or (once there are two) a composite of them; owned likewise. */
    private ByteBuf done;
    private boolean doneIsComposite;

    /**
     * @param messages the number of frames this pass will add (a sizing hint)
     * @param copyBudget bytes of entries the pass may copy ({@link #copyBudget(int)}; 0 when the connection is not
     *        writable)
     */
    MessageFrames(ByteBufAllocator alloc, int messages, int partition, int copyBudget) {
        this.alloc = alloc;
        this.partition = partition;
        this.copyBudget = copyBudget;
        this.remaining = Math.max(1, messages);
    }

    /** Adds the frame of one message whose bytes are {@code entry}'s readable bytes (not consumed, not released). */
    void add(long consumerId, PositionImpl position, long consumerEpoch, ByteBuf entry) {
        int payloadBytes = entry.readableBytes();
        boolean copied = payloadBytes <= COPY_LIMIT && payloadBytes <= copyBudget;
        prepareCommand(consumerId, position, consumerEpoch);
        ByteBuf out = room(MAX_HEADER_BYTES + (copied ? payloadBytes : 0), copied ? payloadBytes : 0);
        // The sizes go in front once the command is written: writeTo returns its size, so the command's fields are
        // walked once, not twice (getSerializedSize walks them all too); experiment 12 in docs/benchmarks.md.
        int start = out.writerIndex();
        out.writerIndex(start + 8);
        int commandBytes = command.writeTo(out);
        out.setInt(start, 4 + commandBytes + payloadBytes);
        out.setInt(start + 4, commandBytes);
        if (copied) {
            out.writeBytes(entry, entry.readerIndex(), payloadBytes);
            copyBudget -= payloadBytes;
        } else {
            // The header stays in the current buffer (the next headers follow it there); the part written so far
            // goes out as a slice, then the entry's bytes by reference.
            appendPending();
            append(entry.retainedDuplicate());
        }
        remaining = Math.max(1, remaining - 1);
    }

    private void prepareCommand(long consumerId, PositionImpl position, long consumerEpoch) {
        CommandMessage message = command.setMessage().setConsumerId(consumerId);
        message.setMessageId().setLedgerId(position.getLedgerId()).setEntryId(position.getEntryId())
                .setPartition(partition);
        if (consumerEpoch > Commands.DEFAULT_CONSUMER_EPOCH) {
            message.setConsumerEpoch(consumerEpoch);
        } else {
            message.clearConsumerEpoch();
        }
    }

    /** The current buffer with at least {@code need} bytes free; a new one sized for the frames still to come. */
    private ByteBuf room(int need, int payloadBytes) {
        if (current != null && current.writableBytes() >= need) {
            return current;
        }
        closeCurrent();
        // The frames still to come, copying no more than the budget allows.
        long expected = (long) remaining * MAX_HEADER_BYTES + Math.min((long) remaining * payloadBytes, copyBudget);
        current = alloc.directBuffer((int) Math.max(need, Math.min(expected, BUFFER_BYTES)));
        pendingStart = 0;
        return current;
    }

    /** Hands the current buffer's pending bytes to {@link #done}: the buffer itself when they are all of it. */
    private void closeCurrent() {
        if (current == null) {
            return;
        }
        ByteBuf b = current;
        current = null;
        if (pendingStart == 0 && b.isReadable()) {
            append(b);
            return;
        }
        try {
            if (b.writerIndex() > pendingStart) {
                append(b.retainedSlice(pendingStart, b.writerIndex() - pendingStart));
            }
        } finally {
            b.release(); // this object's own reference; the slices handed over hold theirs
        }
    }

    /** Hands the current buffer's pending bytes to {@link #done} as a slice and keeps filling the buffer. */
    private void appendPending() {
        int end = current.writerIndex();
        append(current.retainedSlice(pendingStart, end - pendingStart));
        pendingStart = end;
    }

    private void append(ByteBuf part) {
        if (done == null) {
            done = part;
        } else if (doneIsComposite) {
            ((CompositeByteBuf) done).addComponent(true, part);
        } else {
            CompositeByteBuf parts = alloc.compositeDirectBuffer(Integer.MAX_VALUE);
            parts.addComponent(true, done);
            done = parts;
            doneIsComposite = true;
            parts.addComponent(true, part);
        }
    }

    /** Hands the frames over (the caller writes and so releases them); null when nothing was added. */
    ByteBuf finish() {
        closeCurrent();
        ByteBuf frames = done;
        done = null;
        return frames;
    }

    /** Frees whatever {@link #finish} has not handed over (after a failure on the way); harmless after it. */
    void release() {
        if (current != null) {
            current.release();
            current = null;
        }
        if (done != null) {
            done.release();
            done = null;
        }
    }
}
