package io.github.pulsarbroadcast.broadcast.dispatch;

import static org.testng.Assert.assertEquals;

import java.util.TreeMap;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.testng.annotations.Test;

/** Counting entries across ledgers: gaps in ledger ids, deleted ledgers, the open ledger, positions past the end. */
@Test(groups = "unit")
public class EntryOffsetsTest {

    private static EntryOffsets threeLedgers() {
        TreeMap<Long, Long> entries = new TreeMap<>();
        entries.put(3L, 10L);
        entries.put(5L, 4L);
        entries.put(9L, 0L); // open: its count comes from the last confirmed entry
        return EntryOffsets.of(entries, PositionImpl.get(9, 2));
    }

    @Test(timeOut = 10_000)
    public void countsAcrossLedgers() {
        EntryOffsets o = threeLedgers();
        assertEquals(o.lag(PositionImpl.get(9, 2)), 0);
        assertEquals(o.lag(PositionImpl.get(9, 1)), 1);
        assertEquals(o.lag(PositionImpl.get(9, -1)), 3);
        assertEquals(o.lag(PositionImpl.get(5, 3)), 3);
        assertEquals(o.lag(PositionImpl.get(5, 0)), 6);
        assertEquals(o.lag(PositionImpl.get(3, -1)), 17);
        assertEquals(o.lag(PositionImpl.get(3, 9)), 7);
    }

    @Test(timeOut = 10_000)
    public void positionsOutsideTheLedgers() {
        EntryOffsets o = threeLedgers();
        // A ledger deleted before the first one kept: everything kept is behind it.
        assertEquals(o.lag(PositionImpl.get(1, 50)), 17);
        // A ledger id between two kept ones (removed when empty): counts from the next one.
        assertEquals(o.lag(PositionImpl.get(4, 7)), 7);
        // Past the end (the next ledger, not created yet), and the last entry itself.
        assertEquals(o.lag(PositionImpl.get(10, -1)), 0);
        assertEquals(o.lag(PositionImpl.get(9, 5)), 0);
    }

    @Test(timeOut = 10_000)
    public void emptyTopic() {
        EntryOffsets o = EntryOffsets.of(new TreeMap<>(), PositionImpl.get(7, -1));
        assertEquals(o.lag(PositionImpl.get(7, -1)), 0);
        assertEquals(o.lag(PositionImpl.EARLIEST), 0);
    }
}
