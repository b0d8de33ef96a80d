package io.github.pulsarbroadcast.broadcast.dispatch;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.bookkeeper.mledger.Entry;
import org.apache.bookkeeper.mledger.impl.EntryImpl;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.common.api.proto.MessageMetadata;
import org.apache.pulsar.common.protocol.Commands;
import org.apache.pulsar.common.protocol.Markers;

/** Real managed-ledger entries holding real Pulsar message metadata, for tests without a broker. */
final class TestEntries {

    private TestEntries() {
    }

    /** An entry at {@code ledger:entry} holding {@code messages} messages (a batch when more than one). */
    static Entry entry(long ledger, long entry, int messages) {
        MessageMetadata metadata = new MessageMetadata().setProducerName("test").setSequenceId(entry)
                .setPublishTime(System.currentTimeMillis());
        if (messages > 1) {
            metadata.setNumMessagesInBatch(messages);
        }
        ByteBuf payload = Unpooled.wrappedBuffer(("payload-" + ledger + ":" + entry).getBytes(StandardCharsets.UTF_8));
        ByteBuf data = Commands.serializeMetadataAndPayload(Commands.ChecksumType.Crc32c, metadata, payload);
        Entry e = EntryImpl.create(ledger, entry, data);
        data.release();
        payload.release();
        return e;
    }

    /** An entry at {@code ledger:entry} holding one message written in transaction {@code (txnMostBits, 0)}. */
    static Entry inTransaction(long ledger, long entry, long txnMostBits) {
        MessageMetadata metadata = new MessageMetadata().setProducerName("test").setSequenceId(entry)
                .setPublishTime(System.currentTimeMillis()).setTxnidMostBits(txnMostBits).setTxnidLeastBits(0);
        ByteBuf payload = Unpooled.wrappedBuffer(new byte[] {1});
        ByteBuf data = Commands.serializeMetadataAndPayload(Commands.ChecksumType.Crc32c, metadata, payload);
        Entry e = EntryImpl.create(ledger, entry, data);
        data.release();
        payload.release();
        return e;
    }

    /** An entry at {@code ledger:entry} holding a transaction's commit marker (a server-only marker). */
    static Entry marker(long ledger, long entry) {
        ByteBuf data = Markers.newTxnCommitMarker(entry, 1, entry);
        Entry e = EntryImpl.create(ledger, entry, data);
        data.release();
        return e;
    }

    /**
     * An entry at {@code ledger:entry} that is no Pulsar message at all, as a client writing raw frames can publish
     * (shape 0: one byte; 1: the broker-entry-metadata magic with an impossible size; 2: no byte).
     */
    static Entry malformed(long ledger, long entry, int shape) {
        ByteBuf data = Unpooled.buffer(8); // not Unpooled.EMPTY_BUFFER, which is never released
        data.writeBytes(shape == 0 ? new byte[] {0x0e} : shape == 1
                ? new byte[] {0x0e, 0x02, 0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff} : new byte[0]);
        Entry e = EntryImpl.create(ledger, entry, data);
        data.release();
        return e;
    }

    /** Storage for parsing entries: no transaction aborted. */
    static SubscriptionStorage storage() {
        return new ModelLedger(1, 1000);
    }

    static EntryBatch batch(long ledger, long fromEntry, int count) {
        List<Entry> entries = new ArrayList<>();
        for (long e = fromEntry; e < fromEntry + count; e++) {
            entries.add(entry(ledger, e, 1));
        }
        return EntryBatch.of(entries, PositionImpl.get(ledger, fromEntry + count), storage());
    }
}
