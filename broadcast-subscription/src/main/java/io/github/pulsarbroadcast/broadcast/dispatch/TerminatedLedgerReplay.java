package io.github.pulsarbroadcast.broadcast.dispatch;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.bookkeeper.mledger.AsyncCallbacks.DeleteCursorCallback;
import org.apache.bookkeeper.mledger.AsyncCallbacks.ReadEntriesCallback;
import org.apache.bookkeeper.mledger.Entry;
import org.apache.bookkeeper.mledger.ManagedCursor;
import org.apache.bookkeeper.mledger.ManagedLedger;
import org.apache.bookkeeper.mledger.ManagedLedgerException;
import org.apache.bookkeeper.mledger.impl.ManagedCursorImpl;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A catch-up read on a terminated managed ledger, where stock's replay cannot serve one: a terminated ledger loaded
 * again has no current ledger, and {@code ManagedCursor.asyncReplayEntries} reads each position through
 * {@code ManagedLedgerImpl.asyncReadEntry}, which then throws a {@code NullPointerException} (2.10.5; stock's reset by
 * time on such a topic fails the same way). The range is read instead by a non-durable cursor of its own, opened at the
 * entry before the first wanted position and deleted once the read is done: that read path
 * ({@code ManagedLedgerImpl.asyncReadEntries}) handles a missing current ledger, and goes through the entry cache as
 * the replay does. The answer is what the replay's would be: the positions the subscription's cursor already deleted
 * are returned and not read (none read when all are, and then no callback, as stock), the others' entries in order.
 * Used for every terminated ledger, loaded again or not, so that one path serves both.
 *
 * <p>Threading: stateless but for a counter of cursor names (atomic); called on the dispatch thread, the callbacks
 * run on the managed ledger's threads.
 */
final class TerminatedLedgerReplay {

    private static final Logger log = LoggerFactory.getLogger(TerminatedLedgerReplay.class);
    private static final AtomicLong READS = new AtomicLong();

    private TerminatedLedgerReplay() {
    }

    /**
     * Reads {@code positions} (contiguous entries of the ledger, but for deleted ones) and returns those already
     * deleted from {@code cursor}, which are not read.
     */
    static Set<PositionImpl> replay(ManagedLedger ledger, ManagedCursor cursor, Set<PositionImpl> positions,
                                    ReadEntriesCallback callback) {
        TreeSet<PositionImpl> wanted = new TreeSet<>();
        Set<PositionImpl> deleted = new HashSet<>();
        for (PositionImpl p : positions) {
            if (isDeleted(cursor, p)) {
                deleted.add(p);
            } else {
                wanted.add(p);
            }
        }
        if (wanted.isEmpty()) {
            return deleted;
        }
        String name = cursor.getName() + "-broadcast-replay-" + READS.incrementAndGet();
        ManagedCursor reader;
        try {
            PositionImpl first = wanted.first();
            // A non-durable cursor starts after its "mark-delete" position: the entry before the first one wanted.
            reader = ledger.newNonDurableCursor(PositionImpl.get(first.getLedgerId(), first.getEntryId() - 1), name,
                    InitialPosition.Earliest, false);
        } catch (ManagedLedgerException e) {
            callback.readEntriesFailed(e, null);
            return deleted;
        }
        // Without a size limit: with one, a cursor that has read nothing yet on a ledger loaded again (no entry size
        // known) reads a single entry (ManagedCursorImpl.applyMaxSizeCap).
        reader.asyncReadEntries(positions.size(), new ReadEntriesCallback() {
            @Override
            public void readEntriesComplete(List<Entry> entries, Object ctx) {
                delete(ledger, cursor, name);
                List<Entry> kept = keepWanted(entries, wanted);
                if (kept.size() == wanted.size()) {
                    callback.readEntriesComplete(kept, ctx);
                    return;
                }
                // Never a short answer: the caller takes a position that is not returned as deleted.
                kept.forEach(Entry::release);
                callback.readEntriesFailed(new ManagedLedgerException("Read " + kept.size() + " of the "
                        + wanted.size() + " entries " + wanted.first() + " to " + wanted.last()), ctx);
            }

            @Override
            public void readEntriesFailed(ManagedLedgerException e, Object ctx) {
                delete(ledger, cursor, name);
                callback.readEntriesFailed(e, ctx);
            }
        }, null, wanted.last());
        return deleted;
    }

    private static boolean isDeleted(ManagedCursor cursor, PositionImpl p) {
        return cursor instanceof ManagedCursorImpl ? ((ManagedCursorImpl) cursor).isMessageDeleted(p)
                : p.compareTo((PositionImpl) cursor.getMarkDeletedPosition()) <= 0;
    }

    /** The entries at wanted positions, in order; the others (deleted meanwhile) are released. */
    private static List<Entry> keepWanted(List<Entry> entries, Set<PositionImpl> wanted) {
        List<Entry> kept = new ArrayList<>(entries.size());
        for (Entry e : entries) {
            if (wanted.contains(PositionImpl.get(e.getLedgerId(), e.getEntryId()))) {
                kept.add(e);
            } else {
                e.release();
            }
        }
        return kept;
    }

    private static void delete(ManagedLedger ledger, ManagedCursor cursor, String name) {
        ledger.asyncDeleteCursor(name, new DeleteCursorCallback() {
            @Override
            public void deleteCursorComplete(Object ctx) {
            }

            @Override
            public void deleteCursorFailed(ManagedLedgerException e, Object ctx) {
                log.warn("[{}][{}] Could not delete the non-durable cursor {} of a catch-up read: {}",
                        ledger.getName(), cursor.getName(), name, e.getMessage());
            }
        }, null);
    }
}
