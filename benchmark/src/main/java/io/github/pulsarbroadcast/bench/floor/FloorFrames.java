package io.github.pulsarbroadcast.bench.floor;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import org.apache.pulsar.common.api.proto.BaseCommand;

/**
 * The MESSAGE frames one connection of the floor server writes in one pass, copied into as few buffers as possible:
 * per frame {@code [total size][command size][CommandMessage]} and the entry's bytes, the bytes of
 * {@code Commands.newMessage(consumerId, 0, seq, -1, 0, entry, null)} (FloorFramesTest), so that a pass to 100
 * consumers is one buffer, one write through the pipeline and one address for the kernel, as the broker's own pass
 * is (experiment 8 in docs/benchmarks.md). Before, the floor wrote each frame as stock Pulsar does (a command buffer
 * and a duplicate of the entry per consumer, two outbound entries each); a floor that did more work per frame than
 * the broker was not a floor.
 *
 * <p>Back-pressure: {@link #fits} says whether the connection is still under its high-water mark, counting the bytes
 * of this pass not yet written (as before, a pass may pass the mark by one frame, which makes the connection
 * unwritable once it is written).
 *
 * <p>Threading: confined to the connection's event loop; one per connection; the command object is reused.
 */
final class FloorFrames {

    /** Upper bound of a frame's header: two 4-byte sizes and the command (type, consumer id, message id). */
    static final int MAX_HEADER_BYTES = 8 + 2 + 2 + 11 + 2 + 33;
    /** A pass's buffers grow to at most this many bytes each (unless one frame needs more). */
    static final int BUFFER_BYTES = 256 * 1024;

    private final BaseCommand command = new BaseCommand().setType(BaseCommand.Type.MESSAGE);
    private final ChannelHandlerContext ctx;
    /** The buffer being filled, or null; written out by {@link #finish} or when the next frame does not fit. */
    private ByteBuf current;

    FloorFrames(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    /**
     * Whether one more frame may be added: the connection, with this pass, is still under its high-water mark. The
     * bytes of this pass already written out are in the channel's pending count (Netty counts a write at once, before
     * the flush), so only the buffer being filled is added (regression, twenty-sixth session's review: counting the
     * written ones again stopped a pass of several buffers at half the mark).
     */
    boolean fits() {
        long pending = current == null ? 0 : current.readableBytes();
        return pending < ctx.channel().bytesBeforeUnwritable();
    }

    /** Adds message {@code seq} for {@code consumerId} (its entry's bytes copied; the entry is not retained). */
    void add(long consumerId, int seq, ByteBuf entry, int framesLeft) {
        int payload = entry.readableBytes();
        int frame = MAX_HEADER_BYTES + payload;
        if (current != null && current.writableBytes() < frame) {
            writeCurrent();
        }
        if (current == null) {
            long wanted = Math.min(BUFFER_BYTES, (long) frame * Math.max(1, framesLeft));
            current = ctx.alloc().directBuffer((int) Math.max(frame, wanted));
        }
        command.setMessage().setConsumerId(consumerId).setMessageId().setLedgerId(0).setEntryId(seq).setPartition(-1);
        int start = current.writerIndex();
        current.writerIndex(start + 8);
        int commandBytes = command.writeTo(current);
        current.setInt(start, 4 + commandBytes + payload);
        current.setInt(start + 4, commandBytes);
        current.writeBytes(entry, entry.readerIndex(), payload);
    }

    /** Writes what this pass added (the caller flushes) and starts the next pass. */
    void finish() {
        if (current != null) {
            writeCurrent();
        }
    }

    private void writeCurrent() {
        ByteBuf out = current;
        current = null;
        if (out.isReadable()) {
            ctx.write(out, ctx.voidPromise());
        } else {
            out.release();
        }
    }
}
