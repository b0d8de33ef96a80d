package io.github.pulsarbroadcast.broadcast.dispatch;

import io.netty.buffer.ByteBuf;
import org.apache.bookkeeper.mledger.Entry;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.common.allocator.PulsarByteBufAllocator;
import org.apache.pulsar.common.api.proto.MessageMetadata;
import org.apache.pulsar.common.protocol.Commands;
import org.apache.pulsar.common.protocol.Markers;

/**
 * One entry read from the managed ledger, shared by every consumer it is sent to. Parsed once when read: where the
 * message metadata starts (after any broker entry metadata), how many messages the entry holds (the flow-control
 * cost of sending it), and whether it is for no consumer at all ({@link #withheld}).
 *
 * <p>Threading: immutable after construction; the data buffer is reference-counted: {@link #retain}/{@link #release}
 * from any thread, and each write takes its own {@link #payloadFor slice}.
 */
final class WindowEntry {

    final PositionImpl position;
    final int messages;
    /**
     * The entry is for no consumer, as stock dispatchers filter it (AbstractBaseDispatcher.filterEntriesForConsumer):
     * a server-only marker (a transaction's commit or abort marker, a replicated subscription's), a message of an
     * aborted transaction, or one whose metadata cannot be parsed. It is never sent: each consumer that reaches it
     * counts it as acknowledged instead, as stock acknowledges it for the subscription.
     */
    final boolean withheld;
    private final ByteBuf data;
    /** Where the entry starts in {@link #data}'s own index space, and how long it is. */
    private final int start;
    private final int length;
    /** Bytes of broker entry metadata before the message metadata (0 when there is none). */
    private final int brokerMetadataLength;

    private WindowEntry(PositionImpl position, ByteBuf data, int brokerMetadataLength, int messages, boolean withheld) {
        this.position = position;
        this.withheld = withheld;
        this.data = data;
        this.start = data.readerIndex();
        this.length = data.readableBytes();
        this.brokerMetadataLength = brokerMetadataLength;
        this.messages = messages;
    }

    /**
     * Takes over the entry's data (one reference) and releases the {@link Entry} wrapper. Data spread over several
     * buffers (a composite, as the broker makes when {@code brokerEntryMetadataInterceptors} prepends its metadata)
     * is copied once into one pooled buffer: each connection then takes one slice of it with a reference count of
     * its own (see {@link ConnectionSend}), and a write costs one I/O vector instead of a walk over the components.
     * {@code storage} tells which transactions were aborted.
     */
    static WindowEntry of(Entry entry, SubscriptionStorage storage) {
        ByteBuf data;
        PositionImpl position;
        try {
            data = flat(entry.getDataBuffer());
            position = PositionImpl.get(entry.getLedgerId(), entry.getEntryId());
        } finally {
            entry.release(); // on every path: the caller never releases an entry handed to this method
        }
        try {
            return parse(position, data, storage);
        } catch (RuntimeException | Error e) {
            data.release();
            throw e;
        }
    }

    private static WindowEntry parse(PositionImpl position, ByteBuf data, SubscriptionStorage storage) {
        // Parse on the buffer itself and restore its reader index: it is ours alone until the window shares it.
        // (A duplicate() of a pooled slice does not keep the slice's indexes, so it cannot be parsed reliably.)
        int start = data.readerIndex();
        int brokerMetadataLength = 0;
        MessageMetadata metadata = null;
        try {
            Commands.skipBrokerEntryMetadataIfExist(data);
            brokerMetadataLength = data.readerIndex() - start;
            metadata = Commands.peekMessageMetadata(data, "broadcast", -1);
        } catch (RuntimeException e) {
            // Fewer bytes than a broker entry metadata header, or one with an impossible size: no message at all
            // (a client writing raw frames can publish one). Stock parses inside its catch-all and drops the entry;
            // this threw out of the fan-out pass, leaked the read's buffers and stopped the tail read (regression,
            // forty-fourth session, found by a read-only review).
            brokerMetadataLength = 0;
        }
        data.readerIndex(start);
        int messages = metadata != null && metadata.hasNumMessagesInBatch() ? metadata.getNumMessagesInBatch() : 1;
        return new WindowEntry(position, data, brokerMetadataLength, Math.max(messages, 1),
                isForNoConsumer(metadata, storage));
    }

    /** See {@link #withheld}; {@code metadata} is null when it could not be parsed. */
    static boolean isForNoConsumer(MessageMetadata metadata, SubscriptionStorage storage) {
        if (metadata == null || Markers.isServerOnlyMarker(metadata)) {
            return true;
        }
        return metadata.hasTxnidMostBits() && metadata.hasTxnidLeastBits()
                && storage.isTxnAborted(metadata.getTxnidMostBits(), metadata.getTxnidLeastBits());
    }

    /** A new reference to {@code data}'s readable bytes in one buffer: itself, or a copy when it is in pieces. */
    private static ByteBuf flat(ByteBuf data) {
        if (data.nioBufferCount() == 1) {
            return data.retain();
        }
        ByteBuf copy = PulsarByteBufAllocator.DEFAULT.directBuffer(data.readableBytes());
        copy.writeBytes(data, data.readerIndex(), data.readableBytes());
        return copy;
    }

    /**
     * A new reference to the bytes to send: from the broker entry metadata when the client gets it, else from the
     * message metadata. The caller's write releases it.
     */
    ByteBuf payloadFor(boolean withBrokerEntryMetadata) {
        int skip = withBrokerEntryMetadata ? 0 : brokerMetadataLength;
        return data.retainedSlice(start + skip, length - skip);
    }

    /** Bytes sent to a consumer that gets no broker entry metadata (what the consumer stats count). */
    int payloadSize() {
        return length - brokerMetadataLength;
    }

    void retain() {
        data.retain();
    }

    void release() {
        data.release();
    }

    /** References held on the data (for tests of reference accounting). */
    int refCnt() {
        return data.refCnt();
    }

    @Override
    public String toString() {
        return position + "x" + messages + (withheld ? " withheld" : "");
    }
}
