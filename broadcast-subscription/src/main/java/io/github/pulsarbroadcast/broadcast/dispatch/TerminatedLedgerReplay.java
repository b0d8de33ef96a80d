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
import org.apache.bookkeeper.mledger.ManagedLedgerException;
import org.apache.bookkeeper.mledger.impl.ManagedCursorImpl;
import org.apache.bookkeeper.mledger.impl.ManagedLedgerImpl;
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
 * ({@code ManagedLedgerImpl.asyncReadEntries}) handles a missing current ledger and looks in the entry cache first.
 * Used for every terminated ledger, loaded again or not, so that one path serves both.
 *
 * <p>The answer keeps the replay's contract, which {@link CatchUpReads} relies on (a position not returned as deleted
 * is taken as read): the positions the subscription's cursor already deleted are returned and not read (none read when
 * all are, and then no callback, as stock); the others' entries come in order, all of them, or the read fails. A read
 * that stops short (the managed cursor hands over what it read before a failure as a success) is continued from where
 * it stopped, so the failure that stopped it, a lost ledger's {@code NonRecoverableLedgerException} for example, is the
 * one reported; a continuation that returns nothing fails the read. Without a size limit: with one, a cursor that has
 * read nothing yet on a ledger loaded again (no entry size known) reads a single entry per call
 * ({@code ManagedCursorImpl.applyMaxSizeCap}).
 *
 * <p>What an operator sees: the cursor, named {@code <subscription>-broadcast-replay-<n>}, in
 * {@code stats-internal} and the managed-ledger cursor metrics while the read runs, and two INFO lines of the managed
 * ledger's when it is opened; deleting it lets the ledger evict cached entries below the slowest active reader, as
 * any cursor that goes inactive does. Non-durable cursors hold back neither trimming nor the backlog.
 *
 * <p>Threading: {@link #replay} runs on the dispatch thread; a {@link Read} then runs on the managed ledger's threads,
 * one callback at a time (each continuation is issued from the callback before it), so its fields need no lock.
 */
final class TerminatedLedgerReplay {

    private static final Logger log = LoggerFactory.getLogger(TerminatedLedgerReplay.class);
    private static final AtomicLong READS = new AtomicLong();

    private TerminatedLedgerReplay() {
    }

    /**
     * Reads {@code positions} (contiguous entries of the ledger, but for deleted ones) and returns those already
     * deleted from {@code cursor}, which are not read. Throws what the first read throws, with the reader deleted.
     */
    static Set<PositionImpl> replay(ManagedLedgerImpl ledger, ManagedCursor cursor, Set<PositionImpl> positions,
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
            if (ledger.getCursors().get(name) != null) {
                // newNonDurableCursor would hand back a subscription of that name, and the delete remove it
                throw new ManagedLedgerException("A cursor named " + name + " exists already");
            }
            PositionImpl first = wanted.first();
            // A non-durable cursor starts after its "mark-delete" position: the entry before the first one wanted.
            reader = ledger.newNonDurableCursor(PositionImpl.get(first.getLedgerId(), first.getEntryId() - 1), name,
                    InitialPosition.Earliest, false);
        } catch (ManagedLedgerException e) {
            callback.readEntriesFailed(e, null);
            return deleted;
        }
        read(reader, wanted, positions.size(), callback, () -> delete(ledger, cursor.getName(), reader.getName()));
        return deleted;
    }

    /**
     * Reads {@code wanted} through {@code reader} ({@code span} entries from the first wanted one reach the last),
     * then runs {@code done} (it deletes the reader) and answers {@code callback}; throws what the first call throws,
     * after {@code done}.
     */
    static void read(ManagedCursor reader, TreeSet<PositionImpl> wanted, int span, ReadEntriesCallback callback,
                     Runnable done) {
        Read read = new Read(reader, wanted, span, callback, done);
        try {
            read.issue();
        } catch (RuntimeException e) {
            done.run();
            throw e;
        }
    }

    private static boolean isDeleted(ManagedCursor cursor, PositionImpl p) {
        return cursor instanceof ManagedCursorImpl ? ((ManagedCursorImpl) cursor).isMessageDeleted(p)
                : p.compareTo((PositionImpl) cursor.getMarkDeletedPosition()) <= 0;
    }

    private static void delete(ManagedLedgerImpl ledger, String subscription, String name) {
        ledger.asyncDeleteCursor(name, new DeleteCursorCallback() {
            @Override
            public void deleteCursorComplete(Object ctx) {
            }

            @Override
            public void deleteCursorFailed(ManagedLedgerException e, Object ctx) {
                log.warn("[{}][{}] Could not delete the non-durable cursor {} of a catch-up read: {}",
                        ledger.getName(), subscription, name, e.getMessage());
            }
        }, null);
    }

    /** One replay through its reader: the entries kept so far, and the continuations. */
    private static final class Read implements ReadEntriesCallback {
        private final ManagedCursor reader;
        private final TreeSet<PositionImpl> wanted;
        /** Entries from the first wanted position to the last: an upper bound of what one call needs. */
        private final int span;
        private final ReadEntriesCallback callback;
        private final Runnable done;
        private final List<Entry> kept = new ArrayList<>();

        Read(ManagedCursor reader, TreeSet<PositionImpl> wanted, int span, ReadEntriesCallback callback,
             Runnable done) {
            this.reader = reader;
            this.wanted = wanted;
            this.span = span;
            this.callback = callback;
            this.done = done;
        }

        void issue() {
            reader.asyncReadEntries(span, this, null, wanted.last());
        }

        @Override
        public void readEntriesComplete(List<Entry> entries, Object ctx) {
            for (Entry e : entries) {
                if (wanted.contains(PositionImpl.get(e.getLedgerId(), e.getEntryId()))) {
                    kept.add(e);
                } else {
                    e.release(); // deleted from the subscription since the read began
                }
            }
            if (kept.size() == wanted.size()) {
                done.run();
                callback.readEntriesComplete(kept, null);
            } else if (entries.isEmpty()) {
                fail(new ManagedLedgerException("Read " + kept.size() + " of the " + wanted.size() + " entries "
                        + wanted.first() + " to " + wanted.last()));
            } else {
                try {
                    issue(); // stopped short: on from where it stopped
                } catch (RuntimeException e) {
                    fail(ManagedLedgerException.getManagedLedgerException(e));
                }
            }
        }

        @Override
        public void readEntriesFailed(ManagedLedgerException e, Object ctx) {
            fail(e);
        }

        private void fail(ManagedLedgerException e) {
            kept.forEach(Entry::release);
            kept.clear();
            done.run();
            callback.readEntriesFailed(e, null);
        }
    }
}
