package io.github.pulsarbroadcast.broadcast.dispatch;

import java.util.ArrayList;
import java.util.List;
import java.util.function.LongBinaryOperator;
import org.apache.bookkeeper.mledger.impl.PositionImpl;

/**
 * The result of one pass of {@link RetainedCursors#scan} over every position, and what it is asked for: reused by
 * the {@link PeriodicSync}, field by field, for every pass.
 *
 * <p>Threading: confined to the dispatch thread, which hands it to the scan (written under the positions' lock) and
 * reads it after.
 */
final class PositionScan {

    /** Decides, under the positions' lock, whether a scan runs and from which mark-delete position. */
    interface Start {
        /** The subscription's mark-delete position, or null when no scan may run now (closed, being reset). */
        PositionImpl markDeletedOrNull();
    }

    /** The mark-delete position the scan started from (null: it did not run). */
    PositionImpl markDeleted;
    PositionImpl lowestAcknowledged;
    /** The lowest acknowledged position of the connected consumers (null: none is connected). */
    PositionImpl lowestConnectedAcknowledged;
    PositionImpl lowestNext;
    final List<BroadcastConsumer> movedForward = new ArrayList<>();
    /** Whether any position (connected or retained) was moved forward. */
    boolean movedAny;
    /** Retained positions (no consumer connected) moved forward. */
    int movedRetained;
    int expired;
    /** When not null, every position's lag ({@link #lagOf}) and connected consumer are added to it. */
    ConsumerSummaries summaries;
    LongBinaryOperator lagOf;
}
