package io.github.pulsarbroadcast.broadcast.dispatch;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;

import io.github.pulsarbroadcast.broadcast.cursor.CursorRules;
import io.github.pulsarbroadcast.broadcast.cursor.VirtualCursor;
import io.github.pulsarbroadcast.broadcast.positions.SavedPosition;
import io.github.pulsarbroadcast.broadcast.positions.SnapshotCodec;
import java.util.List;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.testng.annotations.Test;

/**
 * What {@link RetainedCursors#save} hands to the snapshot when every consumer leaves at once (a topic move closes them
 * all, each a little after the other): their retention ends at whole seconds, so consumers at one position share a
 * group of the snapshot. Regression test of the 100,000-consumer topic move (docs/benchmarks.md, "Reconnect storm"),
 * where each consumer's retention ended at its own millisecond and the snapshot took 36 bytes a consumer.
 *
 * <p>Threading: TestNG's test thread only.
 */
public class RetainedCursorsSaveTest {

    private static final int CONSUMERS = 10_000;

    @Test(groups = "unit", timeOut = 30_000)
    public void consumersThatLeftTogetherShareTheirSnapshotGroup() throws Exception {
        RetainedCursors cursors = new RetainedCursors();
        CursorRules rules = new CursorRules(p -> PositionImpl.get(p.getLedgerId(), p.getEntryId() + 1), 100);
        long nowNanos = 1_000_000_000_000L;
        for (int i = 0; i < CONSUMERS; i++) {
            String name = "vehicle-" + i;
            BroadcastConsumer bc = cursors.attach(name, () -> new VirtualCursor(PositionImpl.get(5, 42), rules),
                    (cursor, resumed) -> new BroadcastConsumer(null, 1, name, null, cursor, false, 0, resumed));
            // Left one after the other, 50 microseconds apart: half a second for all of them.
            cursors.detach(bc, true, nowNanos + 86_400_000_000_000L + i * 50_000L);
        }
        List<SavedPosition> saved = cursors.save(nowNanos, 1_700_000_000_000L, Integer.MAX_VALUE, null);
        assertEquals(saved.size(), CONSUMERS);
        for (SavedPosition p : saved) {
            assertEquals(p.retainedUntilMillis() % 1_000, 0, "whole seconds");
            assertTrue(p.retainedUntilMillis() >= 1_700_000_000_000L + 86_400_000L, "never shorter than retained");
        }
        int bytes = SnapshotCodec.encode(saved).length;
        assertTrue(bytes < 6 * CONSUMERS, bytes + " bytes for " + CONSUMERS + " consumers");
    }

    /** A snapshot saves at most the budget of ranges in all; the positions past it are saved without theirs. */
    @Test(groups = "unit", timeOut = 30_000)
    public void rangesBeyondTheBudgetAreDroppedWholeAndPositionsKept() throws Exception {
        RetainedCursors cursors = new RetainedCursors();
        CursorRules rules = new CursorRules(p -> PositionImpl.get(p.getLedgerId(), p.getEntryId() + 1), 100);
        long[] fiveRanges = {5, 2, 3, 5, 4, 5, 5, 6, 7, 5, 8, 9, 5, 10, 11};
        for (int i = 0; i < 10; i++) {
            String name = "vehicle-" + i;
            cursors.attach(name, () -> VirtualCursor.restored(PositionImpl.get(5, 0), fiveRanges.clone(), rules),
                    (cursor, resumed) -> new BroadcastConsumer(null, 1, name, null, cursor, false, 0, resumed));
        }
        int[] dropped = new int[1];
        List<SavedPosition> saved = cursors.save(1_000_000_000_000L, 1_700_000_000_000L, 23, dropped);
        int withRanges = 0;
        int ranges = 0;
        for (SavedPosition p : saved) {
            assertEquals(p.ackedLedger(), 5);
            assertEquals(p.ackedEntry(), 0, "the acknowledged position is always saved");
            assertTrue(p.ranges().length == 0 || p.ranges().length == 15, "all of a position's ranges or none");
            withRanges += p.ranges().length == 0 ? 0 : 1;
            ranges += p.ranges().length / 3;
        }
        assertEquals(saved.size(), 10);
        assertEquals(withRanges, 4, "4 x 5 ranges fit a budget of 23");
        assertTrue(ranges <= 23);
        assertEquals(dropped[0], 6);
        cursors.save(1_000_000_000_000L, 1_700_000_000_000L, Integer.MAX_VALUE, dropped);
        assertEquals(dropped[0], 0);
    }
}
