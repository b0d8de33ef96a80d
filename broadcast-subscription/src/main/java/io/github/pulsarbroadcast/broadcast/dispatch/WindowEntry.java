package io.github.pulsarbroadcast.broadcast.dispatch;

import io.netty.buffer.ByteBuf;
import org.apache.bookkeeper.mledger.Entry;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.common.api.proto.MessageMetadata;
import org.apache.pulsar.common.protocol.Commands;

/**
 * One entry read from the managed ledger, shared by every consumer it is sent to. Parsed once when read: where the
 * message metadata starts (after any broker entry metadata) and how many messages the entry holds (the flow-control
 * cost of sending it).
 *
 * <p>Threading: immutable after construction; the data buffer is reference-counted: {@link #retain}/{@link #release}
 * from any thread, and each write takes its own {@link #payloadFor slice}.
 */
final class WindowEntry {

    final PositionImpl position;
    final int messages;
    final boolean chunk;
    private final ByteBuf data;
    /** Reader index of the message metadata, past any broker entry metadata. */
    private final int metadataIndex;

    private WindowEntry(PositionImpl position, ByteBuf data, int metadataIndex, int messages, boolean chunk) {
        this.position = position;
        this.data = data;
        this.metadataIndex = metadataIndex;
        this.messages = messages;
        this.chunk = chunk;
    }

    /** Takes over the entry's data (one reference) and releases the {@link Entry} wrapper. */
    static WindowEntry of(Entry entry) {
        ByteBuf data = entry.getDataBuffer().retain();
        PositionImpl position = PositionImpl.get(entry.getLedgerId(), entry.getEntryId());
        entry.release();
        int start = data.readerIndex();
        ByteBuf view = data.duplicate();
        Commands.skipBrokerEntryMetadataIfExist(view);
        int metadataIndex = view.readerIndex();
        MessageMetadata metadata = Commands.peekMessageMetadata(view, "broadcast", -1);
        int messages = metadata != null && metadata.hasNumMessagesInBatch() ? metadata.getNumMessagesInBatch() : 1;
        boolean chunk = metadata != null && metadata.hasNumChunksFromMsg() && metadata.getNumChunksFromMsg() > 1;
        data.readerIndex(start);
        return new WindowEntry(position, data, metadataIndex, Math.max(messages, 1), chunk);
    }

    /**
     * A new reference to the bytes to send: from the broker entry metadata when the client gets it, else from the
     * message metadata. The caller's write releases it.
     */
    ByteBuf payloadFor(boolean withBrokerEntryMetadata) {
        int from = withBrokerEntryMetadata ? data.readerIndex() : metadataIndex;
        return data.retainedSlice(from, data.writerIndex() - from);
    }

    /** Bytes sent to a consumer that gets no broker entry metadata (what the consumer stats count). */
    int payloadSize() {
        return data.writerIndex() - metadataIndex;
    }

    void retain() {
        data.retain();
    }

    void release() {
        data.release();
    }

    @Override
    public String toString() {
        return position + "x" + messages;
    }
}
