package io.github.pulsarbroadcast.broadcast.dispatch;

import io.github.pulsarbroadcast.broadcast.cursor.VirtualCursor;
import org.apache.bookkeeper.mledger.impl.PositionImpl;

/**
 * An ordered run of entries that a dispatch round sends from: the {@link EntryWindow} or one {@link EntryBatch}.
 *
 * <p>Threading: the dispatch thread only.
 */
interface EntrySource {

    int size();

    WindowEntry get(int i);

    /** The position that follows the last entry (where a consumer that took everything continues). */
    PositionImpl after();

    /** Index of the first entry at or after {@code position}, or {@link #size()} if there is none. */
    default int indexAtOrAfter(PositionImpl position) {
        return indexAtOrAfter(position.getLedgerId(), position.getEntryId());
    }

    /** {@link #indexAtOrAfter(PositionImpl)} for a cursor's next position (nothing allocated). */
    default int indexAtOrAfterNextOf(VirtualCursor cursor) {
        return indexAtOrAfter(cursor.sending.nextLedger(), cursor.sending.nextEntry());
    }

    /** {@link #indexAtOrAfter(PositionImpl)} for the position {@code ledger:entry} (nothing allocated). */
    default int indexAtOrAfter(long ledger, long entry) {
        int lo = 0;
        int hi = size();
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            PositionImpl at = get(mid).position;
            if (VirtualCursor.compare(at.getLedgerId(), at.getEntryId(), ledger, entry) < 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }
}
