package io.github.pulsarbroadcast.broadcast.positions;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;
import static org.testng.Assert.expectThrows;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.testng.annotations.Test;

/**
 * The snapshot codec: random sets of positions (names with shared prefixes, non-ASCII names, the empty-ledger
 * position {@code -1:-1}, individual ranges, retention times) come back exactly; damaged bytes are refused, never
 * misread; the join floor comes back, and a snapshot of format 1 (written before the join floor) is still read;
 * and the size a consumer costs at the tail.
 */
public class SnapshotCodecTest {

    @Test(groups = "unit", timeOut = 60_000)
    public void randomSnapshotsComeBackExactly() throws Exception {
        long seed = Long.getLong("broadcast.codec.seed", System.nanoTime());
        Random rnd = new Random(seed);
        for (int round = 0; round < 500; round++) {
            List<SavedPosition> positions = randomPositions(rnd);
            List<SavedPosition> back = SnapshotCodec.decode(SnapshotCodec.encode(positions));
            assertEquals(new HashSet<>(back), new HashSet<>(positions), "seed " + seed + " round " + round);
            assertEquals(back.size(), positions.size(), "seed " + seed);
        }
    }

    @Test(groups = "unit", timeOut = 60_000)
    public void theJoinFloorComesBackAndFormat1IsStillRead() throws Exception {
        List<SavedPosition> positions = List.of(new SavedPosition("car-a", 7, 12, null, 0),
                new SavedPosition("car-b", -1, -1, new long[] {7, 14, 20}, 1_700_000_000_000L));
        for (JoinFloor floor : new JoinFloor[] {new JoinFloor(7, 99), new JoinFloor(-1, -1), null,
            new JoinFloor(7, 99, 1_800_000_000_123L), new JoinFloor(7, 99, 1_800_000_000_123L, true)}) {
            SnapshotCodec.Snapshot back = SnapshotCodec.decodeSnapshot(SnapshotCodec.encode(positions, floor));
            assertEquals(back.positions, positions);
            assertEquals(back.joinFloor, floor);
        }
        // Format 1: the same bytes without the floor's flag, version 1, its own CRC.
        byte[] v2 = SnapshotCodec.encode(positions, null);
        java.io.ByteArrayOutputStream v1 = new java.io.ByteArrayOutputStream();
        v1.write(v2, 0, 3);
        v1.write(1);
        v1.write(v2, 5, v2.length - 4 - 5);
        java.util.zip.CRC32 crc = new java.util.zip.CRC32();
        crc.update(v1.toByteArray());
        v1.write(java.nio.ByteBuffer.allocate(4).putInt((int) crc.getValue()).array());
        SnapshotCodec.Snapshot old = SnapshotCodec.decodeSnapshot(v1.toByteArray());
        assertEquals(old.positions, positions, "format 1 is read");
        assertEquals(old.joinFloor, null, "format 1 has no floor");
        byte[] v3 = v2.clone();
        v3[3] = 3;
        expectThrows(SnapshotCodec.CorruptSnapshotException.class, () -> SnapshotCodec.decode(v3));
    }

    private static List<SavedPosition> randomPositions(Random rnd) {
        List<SavedPosition> out = new ArrayList<>();
        Set<String> names = new HashSet<>();
        int n = rnd.nextInt(200);
        String[] prefixes = {"vehicle-", "vehicle-1", "car-é-", "", "x"};
        for (int i = 0; i < n; i++) {
            String name = prefixes[rnd.nextInt(prefixes.length)] + rnd.nextInt(rnd.nextBoolean() ? 10 : 100_000);
            if (name.isEmpty() || !names.add(name)) {
                continue;
            }
            long ledger = rnd.nextInt(10) == 0 ? -1 : rnd.nextInt(4);
            long entry = ledger < 0 ? -1 : rnd.nextInt(5);
            long[] ranges = new long[rnd.nextInt(4) == 0 ? 3 * (1 + rnd.nextInt(3)) : 0];
            for (int r = 0; r < ranges.length; r += 3) {
                ranges[r] = rnd.nextInt(5);
                ranges[r + 1] = rnd.nextInt(1000);
                ranges[r + 2] = ranges[r + 1] + 1 + rnd.nextInt(Integer.MAX_VALUE);
            }
            long until = rnd.nextBoolean() ? 0 : 1_700_000_000_000L + rnd.nextInt(1_000_000);
            out.add(new SavedPosition(name, ledger, entry, ranges, until));
        }
        return out;
    }

    @Test(groups = "unit", timeOut = 60_000)
    public void damagedBytesAreRefused() {
        List<SavedPosition> positions = List.of(new SavedPosition("a", 1, 2, null, 0),
                new SavedPosition("b", 1, 3, new long[] {1, 5, 9}, 42));
        byte[] good = SnapshotCodec.encode(positions);
        Random rnd = new Random(1);
        for (int i = 0; i < 200; i++) {
            byte[] bad = good.clone();
            bad[rnd.nextInt(bad.length)] ^= (byte) (1 + rnd.nextInt(255));
            expectThrows(SnapshotCodec.CorruptSnapshotException.class, () -> SnapshotCodec.decode(bad));
        }
        byte[] truncated = java.util.Arrays.copyOf(good, good.length - 1);
        expectThrows(SnapshotCodec.CorruptSnapshotException.class, () -> SnapshotCodec.decode(truncated));
        expectThrows(SnapshotCodec.CorruptSnapshotException.class, () -> SnapshotCodec.decode(new byte[3]));
    }

    /**
     * The budget: at most 16 bytes per consumer at the tail. 100,000 consumers named {@code vehicle-N}, all
     * but a few at the last position.
     */
    @Test(groups = "unit", timeOut = 60_000)
    public void aConsumerAtTheTailCostsAFewBytes() {
        List<SavedPosition> positions = new ArrayList<>();
        for (int i = 0; i < 100_000; i++) {
            long entry = i % 1000 == 0 ? 900 : 999;
            positions.add(new SavedPosition("vehicle-" + i, 7, entry, null, 0));
        }
        int bytes = SnapshotCodec.encode(positions).length;
        double perConsumer = bytes / 100_000.0;
        System.out.printf("SnapshotCodecTest: 100,000 consumers at the tail: %,d bytes, %.2f bytes per consumer%n",
                bytes, perConsumer);
        assertTrue(perConsumer <= 16, perConsumer + " bytes per consumer");
    }
}
