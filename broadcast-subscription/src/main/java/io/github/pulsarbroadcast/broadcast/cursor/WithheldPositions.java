package io.github.pulsarbroadcast.broadcast.cursor;

import java.util.concurrent.ConcurrentSkipListSet;
import org.apache.bookkeeper.mledger.impl.PositionImpl;

/**
 * The positions of one subscription's entries that no consumer is sent (server-only markers such as a transaction's
 * commit and abort markers, messages of aborted transactions): a consumer's acknowledged position moves over them as
 * over positions it acknowledged itself ({@link VirtualCursor#passWithheld}), so that no consumer keeps an
 * acknowledgement range per such entry (regression, forty-first session's review: one range per commit marker and
 * tail consumer, outside the bound on ranges). A position is added when the first consumer reaches its entry, and
 * dropped once the subscription's mark-delete position passes it; entries read again (after a reset-cursor) add
 * theirs again before any consumer reaches them. Like stock's individually deleted messages for such entries, the set
 * grows while a consumer that does not acknowledge holds the mark-delete position.
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

    /** Drops the positions at or below {@code markDeleted}; dispatch thread. */
    public void dropUpTo(PositionImpl markDeleted) {
        if (!positions.isEmpty()) {
            positions.headSet(markDeleted, true).clear();
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
