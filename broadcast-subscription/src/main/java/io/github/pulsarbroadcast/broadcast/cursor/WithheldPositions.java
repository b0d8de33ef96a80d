package io.github.pulsarbroadcast.broadcast.cursor;

import java.util.concurrent.ConcurrentSkipListSet;
import org.apache.bookkeeper.mledger.impl.PositionImpl;

/**
 * The positions of one subscription's entries that no consumer is sent (server-only markers such as a transaction's
 * commit and abort markers, messages of aborted transactions): a consumer's acknowledged position moves over them as
 * over positions it acknowledged itself ({@link VirtualCursor#passWithheld}), so that no consumer keeps an
 * acknowledgement range per such entry (regression, forty-first session's review: one range per commit marker and
 * tail consumer, outside the bound on ranges). A position is added (again) whenever a consumer reaches its entry, and
 * dropped once every connected consumer's acknowledged position passed it ({@code PeriodicSync}). That is safe because
 * a consumer's next position passes such an entry only by reaching it, or when it is already acknowledged or in the
 * consumer's own ranges, and a consumer that is not connected is rewound before it is sent anything again: it reaches
 * the entries after its acknowledged position again. So the set holds what lies between the slowest connected consumer
 * and the tail; it grows while a connected consumer that does not acknowledge holds back, as stock's individually
 * deleted messages do.
 *
 * <p>Threading: a {@link ConcurrentSkipListSet}: the dispatch thread adds and drops, acknowledgement threads read
 * (under a cursor's monitor). Empty unless the topic holds such entries: then moving an acknowledged position costs
 * one {@code isEmpty()}.
 */
public final class WithheldPositions {

    private final ConcurrentSkipListSet<PositionImpl> positions = new ConcurrentSkipListSet<>();

    /** Records {@code position} (again); dispatch thread. */
    public void add(PositionImpl position) {
        positions.add(position);
    }

    /** Drops the positions at or below {@code position}; dispatch thread. */
    public void dropUpTo(PositionImpl position) {
        if (!positions.isEmpty()) {
            positions.headSet(position, true).clear();
        }
    }

    public int size() {
        return positions.size();
    }

    /**
     * {@code from} moved over the withheld positions that follow it, none past {@code (limitLedger, limitEntry)};
     * {@code from} itself (the same object) when none does.
     */
    PositionImpl passFrom(PositionImpl from, PositionSequence sequence, long limitLedger, long limitEntry) {
        if (positions.isEmpty()) {
            return from;
        }
        PositionImpl at = from;
        while (VirtualCursor.compare(at.getLedgerId(), at.getEntryId(), limitLedger, limitEntry) < 0) {
            PositionImpl w = positions.higher(at);
            if (w == null || VirtualCursor.compare(w.getLedgerId(), w.getEntryId(), limitLedger, limitEntry) > 0
                    || !follows(w, at, sequence)) {
                break;
            }
            at = w;
        }
        return at;
    }

    /**
     * {@code position} moved back over the withheld positions just before it in its ledger, none at or below
     * {@code (floorLedger, floorEntry)}; {@code position} itself when there is none.
     */
    PositionImpl extendBack(PositionImpl position, long floorLedger, long floorEntry) {
        if (positions.isEmpty()) {
            return position;
        }
        PositionImpl at = position;
        for (PositionImpl w = positions.lower(at); w != null && w.getLedgerId() == at.getLedgerId()
                && w.getEntryId() == at.getEntryId() - 1
                && VirtualCursor.compare(w.getLedgerId(), w.getEntryId(), floorLedger, floorEntry) > 0;
                w = positions.lower(at)) {
            at = w;
        }
        return at;
    }

    /** Whether {@code position} comes right after {@code before} (in one ledger without asking the sequence). */
    private static boolean follows(PositionImpl position, PositionImpl before, PositionSequence sequence) {
        if (position.getLedgerId() == before.getLedgerId()) {
            return position.getEntryId() == before.getEntryId() + 1;
        }
        return position.equals(sequence.next(before));
    }
}
