package io.github.pulsarbroadcast.broadcast.dispatch;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.bookkeeper.mledger.Entry;
import org.apache.bookkeeper.mledger.ManagedLedgerException;
import org.apache.bookkeeper.mledger.ManagedLedgerException.LedgerNotExistException;
import org.apache.bookkeeper.mledger.ManagedLedgerException.NonRecoverableLedgerException;
import org.apache.bookkeeper.mledger.Position;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.client.impl.Backoff;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Consumers behind the window, by the position they wait at, and the one catch-up read that serves them: it starts
 * at the lowest waiting position, is sized to what the consumers there can take, and serves every catching-up
 * consumer whose position falls inside it, so consumers at the same position share one read. A read stays in one
 * ledger. Reads go through the broker's entry cache. A failed read is retried with back-off (100 ms doubling to one
 * minute); one that storage can never serve ({@code NonRecoverableLedgerException}) is skipped, with an error log,
 * when the broker sets {@code autoSkipNonRecoverableData}, as stock dispatchers do: the read's own range, or the rest
 * of a ledger that does not exist any more. Without it, that ledger is set aside until its own retry (same back-off)
 * and the consumers beyond it are read meanwhile: those waiting for it hold no one else.
 *
 * <p>Threading: confined to the subscription's dispatch thread (with its {@link FanOut}); the read callbacks arrive
 * on storage threads and only post back.
 */
final class CatchUpReads extends StorageReads {

    private static final Logger log = LoggerFactory.getLogger(CatchUpReads.class);

    private final TreeMap<PositionImpl, List<BroadcastConsumer>> catchingUp = new TreeMap<>();
    /**
     * The read in flight started before the subscription's cursor was reset: the positions it skipped as deleted may
     * be undeleted now, so its answer must not move anyone past them.
     */
    private boolean stale;
    /** The range the read in flight asked for, and how many entries. */
    private PositionImpl requestedFrom;
    private PositionImpl requestedUpTo;
    private int requestedCount;
    /**
     * Ledgers storage cannot serve (a read failed as non-recoverable, and nothing is skipped), each with the back-off
     * of its own retries (100 ms doubling to one minute), until a read of it succeeds; a few at most (lost ledgers).
     */
    private final Map<Long, Backoff> unreadable = new HashMap<>();
    /** Those of {@link #unreadable} waiting for their retry: reads serve the consumers beyond them meanwhile. */
    private final Set<Long> setAside = new HashSet<>();

    CatchUpReads(FanOut fanOut) {
        super(fanOut);
    }

    /** {@code bc} waits at {@code next} (a normalized position behind the window) with permits. */
    void await(BroadcastConsumer bc, PositionImpl next) {
        bc.state = BroadcastConsumer.State.CATCHING_UP;
        bc.catchingUpAt = next;
        catchingUp.computeIfAbsent(next, k -> new ArrayList<>()).add(bc);
        read();
    }

    /**
     * Takes {@code bc} off the position it waits at. By the key it was filed under, not by its cursor's next
     * position: a consumer that resumed the same position by name may have rewound the shared cursor meanwhile.
     */
    void forget(BroadcastConsumer bc) {
        PositionImpl at = bc.catchingUpAt;
        List<BroadcastConsumer> list = at == null ? null : catchingUp.get(at);
        if (list != null && list.remove(bc) && list.isEmpty()) {
            catchingUp.remove(at);
        }
        bc.catchingUpAt = null;
    }

    void clear() {
        catchingUp.clear();
        unreadable.clear();
        setAside.clear();
    }

    /** The cursor was reset: the answer of a read in flight is thrown away and the read made again. */
    void invalidate() {
        stale = pending;
    }

    @Override
    void read() {
        PositionImpl first = mayRead() ? firstToRead() : null;
        if (first == null) {
            return;
        }
        // Read up to the window if the window holds what follows, else up to the tail (the window may have a gap
        // after the cursor was moved forward).
        EntryWindow window = fanOut.window;
        PositionImpl limit = window.size() > 0 && first.compareTo(window.firstPosition()) < 0
                ? window.firstPosition() : fanOut.tailFrontier();
        // Read no more than the consumers at the lowest position can take now: the rest would be read again.
        int wanted = 1;
        for (BroadcastConsumer bc : catchingUp.get(first)) {
            wanted = Math.max(wanted, bc.cursor.sending.permits());
        }
        int count = Math.min(fanOut.config.maxReadBatchSize(), wanted);
        // One ledger per read: a ledger that storage lost then fails only reads of its own entries, so a skip
        // (autoSkipNonRecoverableData) never takes readable entries of the ledger before or after it along. Only
        // entries that were written: past the last one the ledger's next position is that position itself.
        TreeSet<PositionImpl> positions = new TreeSet<>();
        PositionImpl written = fanOut.storage.lastConfirmed();
        // Nor past the max read position: an operator's skip or reset can leave the tail past an open transaction.
        PositionImpl max = fanOut.storage.maxReadPosition();
        PositionImpl readable = max.compareTo(written) < 0 ? max : written;
        for (PositionImpl p = first; positions.size() < count && p.compareTo(limit) < 0 && p.compareTo(readable) <= 0
                && p.getLedgerId() == first.getLedgerId(); p = fanOut.storage.next(p)) {
            if (!positions.add(p)) {
                break; // a next position that did not move on (never below the last written entry): never spin
            }
        }
        if (positions.isEmpty() && first.compareTo(readable) > 0 && first.compareTo(written) <= 0) {
            awaitTransaction(); // they wait where they are
            return;
        }
        if (positions.isEmpty()) {
            // The window or the tail caught up with them meanwhile.
            List<BroadcastConsumer> all = takeRange(first, catchingUp.lastKey());
            fanOut.placeAll(all);
            return;
        }
        pending = true;
        requestedFrom = first;
        requestedUpTo = positions.last();
        requestedCount = positions.size();
        Set<? extends Position> deleted;
        try {
            deleted = fanOut.storage.replay(positions, this);
        } catch (RuntimeException e) {
            failedToIssue(e, null);
            return;
        }
        if (deleted.size() == positions.size()) {
            // Every position was already deleted from the subscription: 2.10 then never calls back.
            postPass(new ArrayList<>(), System.nanoTime());
        }
    }

    /** The lowest waiting position outside the ledgers set aside; null when there is none. */
    private PositionImpl firstToRead() {
        PositionImpl first = catchingUp.isEmpty() ? null : catchingUp.firstKey();
        while (first != null && setAside.contains(first.getLedgerId())) {
            first = catchingUp.higherKey(PositionImpl.get(first.getLedgerId(), Long.MAX_VALUE));
        }
        return first;
    }

    /** Removes and returns the consumers waiting at positions in [from, to], leaving their state to the caller. */
    private List<BroadcastConsumer> takeRange(PositionImpl from, PositionImpl to) {
        Map<PositionImpl, List<BroadcastConsumer>> covered = catchingUp.subMap(from, true, to, true);
        List<BroadcastConsumer> taken = new ArrayList<>();
        for (List<BroadcastConsumer> group : covered.values()) {
            taken.addAll(group);
        }
        covered.clear();
        for (BroadcastConsumer bc : taken) {
            bc.state = BroadcastConsumer.State.IDLE;
            bc.catchingUpAt = null;
        }
        return taken;
    }

    @Override
    void onEntries(List<Entry> entries, long arrivedNanos) {
        pending = false;
        if (fanOut.isClosed() || stale) {
            entries.forEach(Entry::release);
            stale = false;
            read();
            return;
        }
        succeeded();
        unreadable.remove(requestedFrom.getLedgerId()); // storage serves it (again)
        PositionImpl upTo = requestedUpTo;
        EntryBatch batch = take(entries, upTo); // before the range is taken: a throw leaves its consumers listed
        // Everyone whose position lies in the requested range is served from this one read; positions the read
        // skipped were already deleted from the subscription, so those consumers simply move past them. A consumer
        // below the range (it arrived while the read was in flight) waits for a read of its own.
        List<BroadcastConsumer> served = takeRange(requestedFrom, upTo);
        Map<ConsumerConnection, ConnectionSend> sends = new IdentityHashMap<>();
        try {
            for (BroadcastConsumer bc : served) {
                if (bc.isRemoved()) {
                    continue; // its cursor may be resumed by another consumer of the same name: never move it
                }
                fanOut.sending.sendFrom(batch, batch.indexAtOrAfterNextOf(bc.cursor), bc, sends);
                if (bc.cursor.sending.permits() > 0 && bc.cursor.sending.compareNextTo(batch.after()) < 0) {
                    bc.cursor.sending.advanceNextTo(batch.after());
                }
            }
        } catch (RuntimeException | Error e) {
            holdAfterFailedPass(e);
            throw e;
        } finally { // also when a consumer threw (StorageReads#readEntriesComplete): see TailReads#onEntries
            fanOut.sending.submit(sends);
            batch.release();
            fanOut.placeAll(served);
        }
        read();
    }

    /**
     * Takes {@code entries} (the read up to {@code upTo}) over as a batch and counts it; on failure nothing stays
     * referenced, the entries included (a review: the batch leaked when counting threw, the entries when
     * {@code next} did).
     */
    private EntryBatch take(List<Entry> entries, PositionImpl upTo) {
        EntryBatch batch = EntryBatch.endingAt(entries, upTo, fanOut.storage);
        try {
            countRead(batch);
            return batch;
        } catch (RuntimeException | Error e) {
            batch.release();
            throw e;
        }
    }

    private void countRead(EntryBatch batch) {
        long bytes = 0;
        for (int i = 0; i < batch.size(); i++) {
            bytes += batch.get(i).payloadSize();
        }
        DispatchCounters counters = fanOut.owner.counters();
        counters.catchUpEntriesRead += batch.size();
        counters.catchUpBytesRead += bytes;
    }

    @Override
    void onFailed(ManagedLedgerException e, Object ctx) {
        pending = false;
        stale = false;
        if (fanOut.isClosed()) {
            return;
        }
        if (e instanceof NonRecoverableLedgerException && fanOut.storage.skipNonRecoverableData()) {
            skipUnreadable(e);
        } else if (e instanceof NonRecoverableLedgerException) {
            setAsideUnreadable(e);
        } else {
            retryLater("Catch-up", e);
        }
    }

    /**
     * Storage can never serve the failed read's ledger and nothing is skipped (the stock default): its consumers wait
     * for it, read again after a back-off of their own, while the consumers beyond it are read now. Regression
     * (thirty-ninth session, found by a review): reads always started at the lowest position, so one consumer waiting
     * for a lost ledger held every consumer behind the window, however far past it.
     */
    private void setAsideUnreadable(ManagedLedgerException e) {
        long ledgerId = requestedFrom.getLedgerId();
        Backoff backoff = unreadable.computeIfAbsent(ledgerId, id -> newBackoff());
        setAside.add(ledgerId);
        afterBackoff("Catch-up", e, backoff, () -> {
            // Not a retry from before a close (which forgets the ledgers set aside): after a reopen that one would cut
            // the ledger's new set-aside short (regression, fortieth session).
            if (unreadable.get(ledgerId) == backoff) {
                setAside.remove(ledgerId);
                read();
            }
        });
        read();
    }

    /**
     * Moves the consumers of the failed range past it, the range acknowledged for them as stock's cursor marks a lost
     * ledger's entries deleted (else their positions, and the mark-delete, stayed before it): storage can never return
     * those entries. A ledger that does
     * not exist any more is skipped to its end at once, as a stock cursor's read skips it; other unreadable entries
     * (a bookie's "no such entry") cost the read's own range only.
     */
    private void skipUnreadable(ManagedLedgerException e) {
        PositionImpl upTo = requestedUpTo;
        long count = requestedCount;
        if (e instanceof LedgerNotExistException) {
            PositionImpl frontier = fanOut.tailFrontier();
            PositionImpl written = fanOut.storage.lastConfirmed();
            for (PositionImpl p = fanOut.storage.next(upTo); p.getLedgerId() == upTo.getLedgerId()
                    && p.compareTo(upTo) > 0 && p.compareTo(frontier) < 0 && p.compareTo(written) <= 0;
                    p = fanOut.storage.next(p)) {
                upTo = p;
                count++;
            }
        }
        PositionImpl after = fanOut.storage.next(upTo);
        log.error("{} Entries {} to {} can never be read ({}); skipping them (autoSkipNonRecoverableData=true)",
                fanOut.name, requestedFrom, upTo, e.getMessage());
        fanOut.owner.counters().entriesSkippedUnreadable += count;
        List<BroadcastConsumer> stuck = takeRange(requestedFrom, upTo);
        for (BroadcastConsumer bc : stuck) {
            fanOut.owner.acknowledgeLost(bc, requestedFrom, upTo); // as stock's cursor marks them deleted
            bc.cursor.sending.advanceNextTo(after);
        }
        fanOut.placeAll(stuck);
        read();
    }
}
