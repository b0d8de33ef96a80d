package io.github.pulsarbroadcast.broadcast.positions;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32;

/**
 * The bytes of one snapshot of a subscription's consumer positions. Consumers at the same place (same acknowledged
 * position, same individual acks, same retention) are written once as a group followed by their names, sorted and
 * front-coded (each name stores how many leading bytes it shares with the previous one and the rest). At the tail
 * almost every consumer is in one of a few groups, so a consumer costs its name's new suffix plus two bytes: 3-5
 * bytes for names like {@code vehicle-004217}.
 *
 * <pre>
 * snapshot := "PBS" version(1 byte) [floor] groupCount:varint group* crc32(4 bytes, of everything before it)
 * floor    := 0 | 1 ledger:zigzag entry:zigzag | (2 | 3) ledger:zigzag entry:zigzag windowEndMillis:varint
 *             (format 2 only: the {@link JoinFloor}, 0 when unknown; 2 when the save was made on close inside a
 *             recovery window, with that window's end; 3 the same for a window a reset-cursor opened alone)
 * group    := ackedLedger:zigzag ackedEntry:zigzag retainedUntilMillis:varint
 *             rangeCount:varint (ledger:zigzag first:varint length:varint)* nameCount:varint name*
 * name     := shared:varint suffixLength:varint suffix(UTF-8 bytes)
 * </pre>
 *
 * <p>Format 2 (since the join floor) is written; format 1 (the same without the floor) is still read, with the
 * floor unknown. A plugin of before format 2 refuses format 2 as unreadable and falls back to the recovery window
 * (duplicates for consumers back within it; one away for longer loses its saved position); so does a plugin of before
 * the floor's window end (twenty-ninth session) for a floor
 * flagged 2, which only a save on close inside a recovery window writes, and one of before the forty-second session
 * for a floor flagged 3, which only a save on close inside a window a reset-cursor opened writes.
 *
 * <p>Threading: stateless; any thread.
 */
public final class SnapshotCodec {

    /** "PBS" and the format written; {@link #VERSION_WITHOUT_FLOOR} is still read. */
    private static final byte[] MAGIC = {'P', 'B', 'S', 2};
    private static final int PREFIX = MAGIC.length - 1;
    private static final byte VERSION = MAGIC[PREFIX];
    private static final byte VERSION_WITHOUT_FLOOR = 1;
    private static final Comparator<byte[]> BYTES = Arrays::compareUnsigned;

    private SnapshotCodec() {
    }

    /** A snapshot that cannot be decoded: truncated, of another format, or failing its checksum. */
    public static final class CorruptSnapshotException extends Exception {
        private static final long serialVersionUID = 1L;

        CorruptSnapshotException(String message) {
            super(message);
        }
    }

    /** What a snapshot holds: the positions, and the join floor (null when unknown). Immutable. */
    public static final class Snapshot {
        public final List<SavedPosition> positions;
        public final JoinFloor joinFloor;

        Snapshot(List<SavedPosition> positions, JoinFloor joinFloor) {
            this.positions = positions;
            this.joinFloor = joinFloor;
        }
    }

    /** Encodes {@code positions} (names must be unique) without a join floor. */
    public static byte[] encode(List<SavedPosition> positions) {
        return encode(positions, null);
    }

    /** Encodes {@code positions} (names must be unique) and {@code joinFloor} (null: unknown). */
    public static byte[] encode(List<SavedPosition> positions, JoinFloor joinFloor) {
        Map<Place, List<byte[]>> groups = new LinkedHashMap<>();
        for (SavedPosition p : positions) {
            groups.computeIfAbsent(new Place(p), k -> new ArrayList<>()).add(p.name().getBytes(StandardCharsets.UTF_8));
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(64 + positions.size() * 6);
        out.write(MAGIC, 0, MAGIC.length);
        if (joinFloor == null) {
            out.write(0);
        } else {
            out.write(joinFloor.windowEndMillis() == 0 ? 1 : joinFloor.windowAfterReset() ? 3 : 2);
            writeVarint(out, zigzag(joinFloor.ledgerId()));
            writeVarint(out, zigzag(joinFloor.entryId()));
            if (joinFloor.windowEndMillis() > 0) {
                writeVarint(out, joinFloor.windowEndMillis());
            }
        }
        writeVarint(out, groups.size());
        for (Map.Entry<Place, List<byte[]>> group : groups.entrySet()) {
            writeGroup(out, group.getKey().position, group.getValue());
        }
        CRC32 crc = new CRC32();
        byte[] body = out.toByteArray();
        crc.update(body);
        return ByteBuffer.allocate(body.length + 4).put(body).putInt((int) crc.getValue()).array();
    }

    private static void writeGroup(ByteArrayOutputStream out, SavedPosition place, List<byte[]> names) {
        writeVarint(out, zigzag(place.ackedLedger()));
        writeVarint(out, zigzag(place.ackedEntry()));
        writeVarint(out, place.retainedUntilMillis());
        long[] ranges = place.ranges();
        writeVarint(out, ranges.length / 3);
        for (int i = 0; i < ranges.length; i += 3) {
            writeVarint(out, zigzag(ranges[i]));
            writeVarint(out, ranges[i + 1]);
            writeVarint(out, ranges[i + 2] - ranges[i + 1]);
        }
        names.sort(BYTES);
        writeVarint(out, names.size());
        byte[] previous = new byte[0];
        for (byte[] name : names) {
            int shared = Arrays.mismatch(previous, name);
            shared = shared < 0 ? name.length : Math.min(shared, name.length);
            writeVarint(out, shared);
            writeVarint(out, name.length - shared);
            out.write(name, shared, name.length - shared);
            previous = name;
        }
    }

    /** The positions of a snapshot written by {@link #encode} (format 1 or 2). */
    public static List<SavedPosition> decode(byte[] bytes) throws CorruptSnapshotException {
        return decodeSnapshot(bytes).positions;
    }

    /** Decodes a snapshot written by {@link #encode}, or by the plugin's format 1 (the join floor then unknown). */
    public static Snapshot decodeSnapshot(byte[] bytes) throws CorruptSnapshotException {
        byte version = bytes.length < MAGIC.length + 5 ? -1 : bytes[PREFIX];
        if ((version != VERSION && version != VERSION_WITHOUT_FLOOR)
                || !Arrays.equals(bytes, 0, PREFIX, MAGIC, 0, PREFIX)) {
            throw new CorruptSnapshotException("not a broadcast positions snapshot (format " + VERSION_WITHOUT_FLOOR
                    + " or " + VERSION + ")");
        }
        CRC32 crc = new CRC32();
        crc.update(bytes, 0, bytes.length - 4);
        if ((int) crc.getValue() != ByteBuffer.wrap(bytes, bytes.length - 4, 4).getInt()) {
            throw new CorruptSnapshotException("checksum mismatch");
        }
        ByteBuffer in = ByteBuffer.wrap(bytes, MAGIC.length, bytes.length - 4 - MAGIC.length);
        try {
            JoinFloor floor = version == VERSION_WITHOUT_FLOOR ? null : readFloor(in);
            List<SavedPosition> positions = new ArrayList<>();
            long groups = readVarint(in);
            for (long g = 0; g < groups; g++) {
                readGroup(in, positions);
            }
            if (in.hasRemaining()) {
                throw new CorruptSnapshotException(in.remaining() + " bytes after the last group");
            }
            return new Snapshot(positions, floor);
        } catch (RuntimeException e) {
            throw new CorruptSnapshotException("malformed: " + e);
        }
    }

    private static JoinFloor readFloor(ByteBuffer in) throws CorruptSnapshotException {
        byte present = in.get();
        if (present == 0) {
            return null;
        }
        if (present < 1 || present > 3) {
            throw new CorruptSnapshotException("join floor flag " + present);
        }
        long ledger = unzigzag(readVarint(in));
        long entry = unzigzag(readVarint(in));
        long windowEnd = present >= 2 ? readVarint(in) : 0;
        if (present >= 2 && windowEnd == 0) {
            throw new CorruptSnapshotException("join floor flag " + present + " without a window end");
        }
        return new JoinFloor(ledger, entry, windowEnd, present == 3);
    }

    private static void readGroup(ByteBuffer in, List<SavedPosition> out) throws CorruptSnapshotException {
        long ledger = unzigzag(readVarint(in));
        long entry = unzigzag(readVarint(in));
        long retainedUntil = readVarint(in);
        long[] ranges = new long[Math.toIntExact(readVarint(in)) * 3];
        for (int i = 0; i < ranges.length; i += 3) {
            ranges[i] = unzigzag(readVarint(in));
            ranges[i + 1] = readVarint(in);
            ranges[i + 2] = ranges[i + 1] + readVarint(in);
        }
        long names = readVarint(in);
        byte[] previous = new byte[0];
        for (long n = 0; n < names; n++) {
            int shared = Math.toIntExact(readVarint(in));
            int suffix = Math.toIntExact(readVarint(in));
            if (shared > previous.length) {
                throw new CorruptSnapshotException("name shares " + shared + " bytes of a " + previous.length
                        + "-byte name");
            }
            byte[] name = Arrays.copyOf(previous, shared + suffix);
            in.get(name, shared, suffix);
            out.add(new SavedPosition(new String(name, StandardCharsets.UTF_8), ledger, entry, ranges, retainedUntil));
            previous = name;
        }
    }

    static void writeVarint(ByteArrayOutputStream out, long value) {
        long v = value;
        while ((v & ~0x7FL) != 0) {
            out.write((int) ((v & 0x7F) | 0x80));
            v >>>= 7;
        }
        out.write((int) v);
    }

    static long readVarint(ByteBuffer in) {
        long result = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            byte b = in.get();
            result |= (long) (b & 0x7F) << shift;
            if ((b & 0x80) == 0) {
                return result;
            }
        }
        throw new IllegalArgumentException("varint longer than 10 bytes");
    }

    private static long zigzag(long v) {
        return (v << 1) ^ (v >> 63);
    }

    private static long unzigzag(long v) {
        return (v >>> 1) ^ -(v & 1);
    }

    /** A position without its name, as a map key. */
    private static final class Place {
        final SavedPosition position;

        Place(SavedPosition position) {
            this.position = position;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Place && position.samePlace(((Place) o).position);
        }

        @Override
        public int hashCode() {
            return Long.hashCode(position.ackedLedger() * 31 + position.ackedEntry())
                    ^ Long.hashCode(position.retainedUntilMillis()) ^ Arrays.hashCode(position.ranges());
        }
    }
}
