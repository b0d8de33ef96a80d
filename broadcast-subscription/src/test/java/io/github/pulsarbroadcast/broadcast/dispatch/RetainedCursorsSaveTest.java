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
        List<SavedPosition> saved = cursors.save(nowNanos, 1_700_000_000_000L);
        assertEquals(saved.size(), CONSUMERS);
        for (SavedPosition p : saved) {
            assertEquals(p.retainedUntilMillis() % 1_000, 0, "whole seconds");
            assertTrue(p.retainedUntilMillis() >= 1_700_000_000_000L + 86_400_000L, "never shorter than retained");
        }
        int bytes = SnapshotCodec.encode(saved).length;
        assertTrue(bytes < 6 * CONSUMERS, bytes + " bytes for " + CONSUMERS + " consumers");
    }
}
