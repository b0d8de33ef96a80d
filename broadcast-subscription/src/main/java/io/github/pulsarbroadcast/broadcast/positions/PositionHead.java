package io.github.pulsarbroadcast.broadcast.positions;

import java.nio.ByteBuffer;
import java.util.zip.CRC32;

/**
 * The head node of {@link MetadataPositionStore}, format 1: magic (4 bytes, "PBH" and the version), the writer id of
 * the store that wrote it (8), the chunk slot in use (4), the number of chunks (4; 0: the snapshot follows inline), the
 * snapshot's length (4) and CRC32 (4), and its save time (8: wall-clock milliseconds, negated for the save made on
 * close); then the inline snapshot, if any. A head has no checksum of its own: {@link #parse} bounds what a damaged
 * one can ask for.
 *
 * <p>Threading: static functions over arrays the caller owns.
 */
final class PositionHead {

    private static final int MAGIC = 0x50424801; // "PBH" version 1
    static final int BYTES = 4 + 8 + 4 + 4 + 4 + 4 + 8;
    private static final int WRITER_OFFSET = 4;
    private static final int SLOT_OFFSET = 12;
    private static final int SAVED_AT_OFFSET = BYTES - 8;
    /**
     * Bounds of a readable head, far above any real snapshot (about 3 bytes per consumer plus its name, and at most
     * 9 MB of acknowledged ranges: 100,000 consumers take about 4 MB), and low enough that a damaged head costs
     * little: at most this many chunk reads and bytes (a review, forty-fifth session: 65,536 reads and 1 GiB).
     * {@link MetadataPositionStore#save} refuses a snapshot a load would refuse.
     */
    static final int MAX_CHUNKS = 4_096;
    static final int MAX_SNAPSHOT_BYTES = 256 << 20;

    /** A parsed head. */
    static final class Fields {
        final int slot;
        final int chunks;
        final int length;
        final int crc;
        /** Negative for the save made on close. */
        final long savedAt;
        /** The inline snapshot ({@code chunks == 0}). */
        final byte[] inline;

        private Fields(int slot, int chunks, int length, int crc, long savedAt, byte[] inline) {
            this.slot = slot;
            this.chunks = chunks;
            this.length = length;
            this.crc = crc;
            this.savedAt = savedAt;
            this.inline = inline;
        }

        /** Why this head cannot name a snapshot (a damaged one), or null. */
        String implausible() {
            if (chunks == 0) {
                return null;
            }
            return chunks < 0 || chunks > MAX_CHUNKS || length < chunks || length > MAX_SNAPSHOT_BYTES
                    ? "head names " + chunks + " chunks of " + length + " bytes in all (at most " + MAX_CHUNKS
                            + " chunks, " + MAX_SNAPSHOT_BYTES + " bytes)" : null;
        }
    }

    private PositionHead() {
    }

    static byte[] encode(long writer, int slot, int chunks, int length, int crc, long savedAt, byte[] inline) {
        return ByteBuffer.allocate(BYTES + inline.length).putInt(MAGIC).putLong(writer).putInt(slot).putInt(chunks)
                .putInt(length).putInt(crc).putLong(savedAt).put(inline).array();
    }

    /** A head of no positions, written by {@code writer}. */
    static byte[] empty(long writer) {
        return encode(writer, 0, 0, 0, 0, 0, new byte[0]);
    }

    /** Whether {@code bytes} are a head of this format. */
    static boolean readable(byte[] bytes) {
        return bytes.length >= BYTES && ByteBuffer.wrap(bytes).getInt(0) == MAGIC;
    }

    /** The head's fields, or null when {@code bytes} are not a head of this format. */
    static Fields parse(byte[] bytes) {
        if (!readable(bytes)) {
            return null;
        }
        ByteBuffer h = ByteBuffer.wrap(bytes, SLOT_OFFSET, bytes.length - SLOT_OFFSET);
        int slot = h.getInt();
        int chunks = h.getInt();
        int length = h.getInt();
        int crc = h.getInt();
        long savedAt = h.getLong();
        byte[] inline = new byte[chunks == 0 ? h.remaining() : 0];
        h.get(inline);
        return new Fields(slot, chunks, length, crc, savedAt, inline);
    }

    /** The writer id in a head's bytes; 0 when they are not a head. */
    static long writerOf(byte[] bytes) {
        return readable(bytes) ? rawWriter(bytes) : 0;
    }

    /** Where a head holds its writer id, whatever the magic says ({@code bytes} at least {@link #BYTES} long). */
    static long rawWriter(byte[] bytes) {
        return ByteBuffer.wrap(bytes).getLong(WRITER_OFFSET);
    }

    /** The chunk slot of a head ({@code bytes} at least {@link #BYTES}). */
    static int slotOf(byte[] bytes) {
        return ByteBuffer.wrap(bytes).getInt(SLOT_OFFSET);
    }

    /**
     * The head as it is, with {@code writer}'s id in it and without the mark of a save made on close (an unreadable
     * head is replaced by an empty one).
     */
    static byte[] takenOver(byte[] bytes, long writer) {
        byte[] rewritten = readable(bytes) ? bytes.clone() : empty(writer);
        ByteBuffer buffer = ByteBuffer.wrap(rewritten);
        buffer.putLong(WRITER_OFFSET, writer);
        buffer.putLong(SAVED_AT_OFFSET, Math.abs(buffer.getLong(SAVED_AT_OFFSET)));
        return rewritten;
    }

    static int crc(byte[] bytes) {
        CRC32 crc = new CRC32();
        crc.update(bytes);
        return (int) crc.getValue();
    }
}
