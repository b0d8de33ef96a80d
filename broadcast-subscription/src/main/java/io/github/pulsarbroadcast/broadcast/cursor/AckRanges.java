package io.github.pulsarbroadcast.broadcast.cursor;

import com.google.common.collect.Range;
import com.google.common.collect.RangeSet;
import com.google.common.collect.TreeRangeSet;
import org.apache.bookkeeper.mledger.impl.PositionImpl;

/**
 * Individually acknowledged positions above a consumer's cumulative position, kept as ranges the way the managed
 * cursor keeps its individually deleted messages: acknowledging every message after one that is never acknowledged
 * costs one range, not one node per message. Within a ledger, neighbouring positions merge into one range
 * ({@code [first, last + 1)}); across a ledger boundary the ranges stay apart and {@link #absorbInto} joins them
 * through the {@link PositionSequence}.
 *
 * <p>Bounded: at most {@code maxRanges} ranges. An ack that would need one more is not recorded ({@link #add} returns
 * false); that message then counts as unacknowledged and is sent again on the consumer's next redelivery or
 * reconnect (at least once, never lost).
 *
 * <p>Threading: not thread-safe; {@link VirtualCursor} guards it with its monitor.
 */
final class AckRanges {

    private final RangeSet<PositionImpl> ranges = TreeRangeSet.create();

    /**
     * Records {@code first} to {@code last} (one ledger; one position, or one with the entries no consumer is sent
     * beside it); false when it would need a range beyond {@code maxRanges}.
     */
    boolean add(PositionImpl first, PositionImpl last, int maxRanges) {
        Range<PositionImpl> range = Range.closedOpen(first, PositionImpl.get(last.getLedgerId(),
                last.getEntryId() + 1));
        if (ranges.asRanges().size() >= maxRanges && !ranges.encloses(range)
                && !ranges.contains(PositionImpl.get(first.getLedgerId(), first.getEntryId() - 1))
                && !ranges.contains(range.upperEndpoint())) {
            return false;
        }
        ranges.add(range);
        return true;
    }

    /**
     * Records every position from {@code first} to {@code last}, both in one ledger, whatever the bound: entries that
     * storage lost, skipped (a few ranges at most, one per lost range), or an entry no consumer is sent that joins the
     * range before it (no new range).
     */
    void addRange(PositionImpl first, PositionImpl last) {
        ranges.add(Range.closedOpen(first, PositionImpl.get(last.getLedgerId(), last.getEntryId() + 1)));
    }

    boolean contains(PositionImpl position) {
        return ranges.contains(position);
    }

    boolean isEmpty() {
        return ranges.isEmpty();
    }

    int rangeCount() {
        return ranges.asRanges().size();
    }

    /** Positions held (for stats and tests). */
    long positionCount() {
        long n = 0;
        for (Range<PositionImpl> r : ranges.asRanges()) {
            PositionImpl lo = r.lowerEndpoint();
            PositionImpl hi = r.upperEndpoint();
            n += hi.getEntryId() - lo.getEntryId();
        }
        return n;
    }

    /**
     * Removing what lies at or below a position inside a range leaves that range open at its lower end: the rest,
     * from the next entry on, is what remains acknowledged; when no entry is left (the position was the range's last),
     * nothing remains. Without this, an empty open range stayed first and blocked every later absorb.
     */
    private void dropOpenResidue() {
        if (ranges.isEmpty()) {
            return;
        }
        Range<PositionImpl> first = ranges.asRanges().iterator().next();
        if (first.lowerBoundType() != com.google.common.collect.BoundType.OPEN) {
            return;
        }
        ranges.remove(first);
        PositionImpl from = PositionImpl.get(first.lowerEndpoint().getLedgerId(),
                first.lowerEndpoint().getEntryId() + 1);
        if (from.compareTo(first.upperEndpoint()) < 0) {
            ranges.add(Range.closedOpen(from, first.upperEndpoint()));
        }
    }

    /** The ranges as {@code ledger, firstEntry, endEntry} triples (each range lies within one ledger). */
    long[] toTriples() {
        long[] out = new long[ranges.asRanges().size() * 3];
        int i = 0;
        for (Range<PositionImpl> r : ranges.asRanges()) {
            long first = r.lowerEndpoint().getEntryId()
                    + (r.lowerBoundType() == com.google.common.collect.BoundType.OPEN ? 1 : 0);
            out[i++] = r.lowerEndpoint().getLedgerId();
            out[i++] = first;
            out[i++] = r.upperEndpoint().getEntryId();
        }
        return out;
    }

    /** Adds the ranges of {@link #toTriples} (restoring a saved position). */
    void addTriples(long[] triples) {
        for (int i = 0; i + 2 < triples.length; i += 3) {
            if (triples[i + 2] > triples[i + 1]) {
                ranges.add(Range.closedOpen(PositionImpl.get(triples[i], triples[i + 1]),
                        PositionImpl.get(triples[i], triples[i + 2])));
            }
        }
    }

    /** The last position held, or null. */
    PositionImpl last() {
        if (ranges.isEmpty()) {
            return null;
        }
        PositionImpl end = ranges.span().upperEndpoint();
        return PositionImpl.get(end.getLedgerId(), end.getEntryId() - 1);
    }

    /**
     * Drops what lies at or below {@code acknowledged}, then absorbs every range that now continues it without a gap
     * (asking {@code sequence} what follows, so a range starting a new ledger joins one that ended the last).
     *
     * @return the new cumulative position ({@code acknowledged} itself when nothing continues it)
     */
    PositionImpl absorbInto(PositionImpl acknowledged, PositionSequence sequence) {
        ranges.remove(Range.atMost(acknowledged));
        dropOpenResidue();
        PositionImpl cumulative = acknowledged;
        while (!ranges.isEmpty()) {
            Range<PositionImpl> first = ranges.asRanges().iterator().next();
            // contains, not lowerEndpoint().equals: removing what lies at or below the cumulative position leaves a
            // range open at its lower end when that position fell inside it (a cumulative ack of a position that was
            // also acknowledged on its own), and its lower endpoint is then the position before the first one held.
            if (!first.contains(sequence.next(cumulative))) {
                break;
            }
            PositionImpl end = first.upperEndpoint();
            cumulative = PositionImpl.get(end.getLedgerId(), end.getEntryId() - 1);
            ranges.remove(first);
        }
        return cumulative;
    }
}
