package io.github.pulsarbroadcast.broadcast.dispatch;

import java.util.Arrays;
import java.util.Map;
import java.util.NavigableMap;
import org.apache.bookkeeper.mledger.impl.PositionImpl;

/**
 * A snapshot of a topic's ledgers that counts entries between positions in O(log ledgers): how far behind the last
 * written entry a consumer is ({@link #lag}), for metrics and the consumer listing. Built once per listing, per
 * periodic sync while metrics are read ({@link ConsumerSummaries}), or per scrape that finds no recent summary, and
 * used for every consumer; never on the delivery path.
 *
 * <p>A position in a ledger that no longer exists (deleted after everyone had it) counts from the next ledger that
 * does. The count is exact for the ledgers of the snapshot; entries written after it are not counted.
 *
 * <p>Threading: immutable after construction; any thread.
 */
public final class EntryOffsets {

    /** Ledger ids in ascending order, and the entries written before each one (in the ledgers of the snapshot). */
    private final long[] ledgerIds;
    private final long[] entriesBefore;
    /** Entries in all the snapshot's ledgers, and those at or before the last confirmed entry. */
    private final long total;
    private final long lastOffset;

    private EntryOffsets(long[] ledgerIds, long[] entriesBefore, long total, PositionImpl lastConfirmed) {
        this.ledgerIds = ledgerIds;
        this.entriesBefore = entriesBefore;
        this.total = total;
        this.lastOffset = offsetOf(lastConfirmed);
    }

    /**
     * @param entriesPerLedger each ledger's id and its number of entries (the open ledger's count is taken from
     *                         {@code lastConfirmed} when it is in that ledger)
     * @param lastConfirmed    the last entry written
     */
    public static EntryOffsets of(NavigableMap<Long, Long> entriesPerLedger, PositionImpl lastConfirmed) {
        int n = entriesPerLedger.size();
        long[] ids = new long[n];
        long[] before = new long[n];
        long total = 0;
        int i = 0;
        for (Map.Entry<Long, Long> e : entriesPerLedger.entrySet()) {
            ids[i] = e.getKey();
            before[i] = total;
            long entries = e.getKey() == lastConfirmed.getLedgerId() ? lastConfirmed.getEntryId() + 1
                    : Math.max(e.getValue(), 0);
            total += entries;
            i++;
        }
        return new EntryOffsets(ids, before, total, lastConfirmed);
    }

    /** Entries after {@code acknowledged} up to the last confirmed entry of the snapshot; 0 when at or past it. */
    public long lag(PositionImpl acknowledged) {
        return lag(acknowledged.getLedgerId(), acknowledged.getEntryId());
    }

    /** {@link #lag(PositionImpl)} of the position ({@code ledgerId}, {@code entryId}). */
    public long lag(long ledgerId, long entryId) {
        return Math.max(0, lastOffset - offsetOf(ledgerId, entryId));
    }

    /** Entries at or before {@code p} (in the snapshot's ledgers). */
    private long offsetOf(PositionImpl p) {
        return offsetOf(p.getLedgerId(), p.getEntryId());
    }

    private long offsetOf(long ledgerId, long entryId) {
        int i = Arrays.binarySearch(ledgerIds, ledgerId);
        if (i >= 0) {
            return entriesBefore[i] + entryId + 1;
        }
        int insertion = -i - 1;
        return insertion >= ledgerIds.length ? total : entriesBefore[insertion];
    }
}
