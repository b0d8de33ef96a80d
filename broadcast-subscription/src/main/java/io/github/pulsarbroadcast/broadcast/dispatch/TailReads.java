package io.github.pulsarbroadcast.broadcast.dispatch;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.apache.bookkeeper.mledger.Entry;
import org.apache.bookkeeper.mledger.ManagedLedgerException;
import org.apache.bookkeeper.mledger.ManagedLedgerException.ConcurrentWaitCallbackException;
import org.apache.bookkeeper.mledger.ManagedLedgerException.NoMoreEntriesToReadException;
import org.apache.bookkeeper.mledger.ManagedLedgerException.NonRecoverableLedgerException;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The consumers waiting at the tail and the one tail read that serves them all: each entry is read from storage
 * once and written to every waiting consumer, grouped by connection. A failed read is retried with back-off
 * (100 ms doubling to one minute: see {@link StorageReads#newBackoff}), except one at entries storage lost, which
 * steps over their ledger ({@link #stepOverLostEntries}); a terminated topic ends the reads, and each consumer at
 * the end is told that it reached the end of the topic once it acknowledged everything ({@link EndOfTopic}).
 *
 * <p>Threading: confined to the subscription's dispatch thread (with its {@link FanOut}); the read callbacks arrive
 * on storage threads and only post back.
 */
final class TailReads extends StorageReads {

    private static final Logger log = LoggerFactory.getLogger(TailReads.class);

    private final TailWaiters waiting;
    /**
     * Identifies the read in flight: the answer of an earlier one is stale (a cancelled read's delayed check can
     * still fail it, ManagedCursorImpl.checkForNewEntries).
     */
    private long readId;
    /** The next position a tail read returns; refreshed from storage whenever no tail read is in flight. */
    private PositionImpl frontier;
    /** A consumer waits at the tail ahead of the frontier: the next read may start further on. */
    private boolean someoneAhead;

    TailReads(FanOut fanOut) {
        super(fanOut);
        this.waiting = new TailWaiters(fanOut);
    }

    PositionImpl frontier() {
        if (!pending || frontier == null) {
            frontier = fanOut.storage.readPosition();
        }
        return frontier;
    }

    /** {@code bc} is at the tail with permits; {@code ahead}: its next position is past the frontier. */
    void await(BroadcastConsumer bc, boolean ahead) {
        if (fanOut.end.isKnown()) {
            bc.state = BroadcastConsumer.State.IDLE;
            fanOut.end.tellIfDone(bc);
            return;
        }
        bc.state = BroadcastConsumer.State.WAITING;
        someoneAhead |= ahead;
        waiting.add(bc);
        read();
    }

    void forget(BroadcastConsumer bc) {
        if (waiting.remove(bc)) {
            someoneAhead = true; // it may have been the one at the frontier
        }
    }

    @Override
    void read() {
        if (!mayRead() || fanOut.end.isKnown() || waiting.count() == 0) {
            return;
        }
        if (someoneAhead) {
            skipToLowestWaiting();
        }
        pending = true;
        frontier();
        readId++;
        try {
            fanOut.storage.readTail(fanOut.config.maxReadBatchSize(), fanOut.config.windowMaxBytes(), this, readId);
        } catch (RuntimeException e) {
            failedToIssue(e, readId);
        }
    }

    /**
     * No consumer waiting at the tail needs the entries between the read position and the lowest of their next
     * positions: when they are more than a window's worth ({@code broadcastWindowMaxEntries}, or another ledger), the
     * read starts there instead of reading those entries first (fewer are read at the tail as before: they fill the
     * window for consumers that come back a little behind). Once a topic is loaded again the read
     * position is the slowest consumer's (a disconnected one's included), and every consumer at the tail waited
     * while the read went through that consumer's whole backlog (regression, thirty-eighth session: 10 s for 50,000
     * entries). Consumers that need those entries later get them from catch-up reads, as consumers behind the window
     * do; the mark-delete position, and so what storage keeps, does not move.
     */
    private void skipToLowestWaiting() {
        someoneAhead = false;
        PositionImpl at = frontier();
        PositionImpl lowest = waiting.lowestBeyond(at);
        if (lowest != null && (lowest.getLedgerId() != at.getLedgerId()
                || lowest.getEntryId() - at.getEntryId() > fanOut.config.windowMaxEntries())) {
            log.info("{} The tail read starts at {}, where the first of the consumers waiting at the tail is, instead"
                    + " of {}: no consumer waiting there needs what lies between", fanOut.name, lowest, at);
            fanOut.storage.seekTail(lowest);
            frontier = null;
        }
    }

    /** Cancels a read that waits for entries and issues it again (see {@link FanOut#rearmTailRead}). */
    void rearm() {
        cancel();
        read();
    }

    /** Cancels a read that waits for entries (one already running completes and is released). */
    void cancel() {
        if (pending && fanOut.storage.cancelTailRead()) {
            pending = false;
            readId++; // a cancelled read's delayed check can still fail it: that answer is stale now
        }
        if (!pending) {
            frontier = null;
        }
    }

    void clear() {
        waiting.clear();
    }

    /**
     * The subscription's cursor was reset: entries of a terminated topic after the reset position are there to read
     * again, so the end is found anew by the next read (regression, twenty-sixth session's review: consumers of a
     * terminated topic reset to an earlier message were told "end of topic" and got nothing).
     */
    void cursorWasReset() {
        fanOut.end.forgotten();
    }

    /**
     * Called on every periodic sync. Finds the end of a terminated topic without a read failing at it: the managed
     * ledger does not fail a read already waiting when it is terminated (only a read that starts afterwards), and no
     * read runs while no consumer waits at the tail. And takes back an end found too early: the ledger says
     * "terminated" as soon as termination begins, and a write confirmed after that can still add the last entry.
     */
    void checkTerminated() {
        if (fanOut.end.isKnown()) {
            if (moreToRead()) {
                takeBackEnd();
            }
        } else if (fanOut.storage.isTerminated()) {
            cancel();
            if (pending) {
                return; // a read runs: its answer says
            }
            if (moreToRead()) {
                read();
            } else {
                endFound();
            }
        }
    }

    /** Not the end after all: the consumers the end left idle go on. */
    private void takeBackEnd() {
        fanOut.end.forgotten();
        fanOut.placeIdle(fanOut.owner.attachedConsumers());
    }

    private boolean moreToRead() {
        return fanOut.storage.normalize(fanOut.storage.readPosition()).compareTo(fanOut.storage.lastConfirmed()) <= 0;
    }

    @Override
    void onEntries(List<Entry> entries, long arrivedNanos) {
        long startNanos = System.nanoTime();
        pending = false;
        if (fanOut.isClosed() || fanOut.owner.attachedCount() == 0) {
            // Nobody to serve: drop the entries, and the window with them (it must stay a gap-free run of entries).
            entries.forEach(Entry::release);
            fanOut.window.clear();
            read();
            return;
        }
        if (entries.isEmpty()) {
            readAfterNothing(); // the window stays: nothing was added (the next batch is checked for a gap below)
            return;
        }
        succeeded();
        Map<ConsumerConnection, ConnectionSend> sends = new IdentityHashMap<>();
        List<BroadcastConsumer> moved = new ArrayList<>();
        EntryBatch batch = null;
        try {
            batch = takeIntoWindow(entries, startNanos, arrivedNanos);
            serveWaiting(batch, sends, moved);
        } catch (RuntimeException | Error e) {
            if (batch == null) {
                // Before any was served (left by the forty-fourth note): left waiting, they would wait for a write
                // after this batch, which the retry reads past. Placed again, they catch up from it.
                waiting.moveAll(moved);
            }
            holdAfterFailedPass(e);
            throw e;
        } finally {
            // Also when a consumer threw (StorageReads#readEntriesComplete): what was built for the others is sent
            // (their cursors say it was), and the one that threw is placed again with the consumers moved.
            fanOut.sending.submit(sends, startNanos, batch == null ? 0 : batch.size());
            if (batch != null) {
                batch.release();
            }
            fanOut.placeAll(moved);
        }
        if (fanOut.end.isKnown()) {
            // Entries after the end was found: a write confirmed during the termination woke the read that failed
            // at the end (the ledger keeps it on its waiting list).
            takeBackEnd();
        }
        fanOut.owner.counters().fanOutPass.recordNanos(System.nanoTime() - startNanos);
        read();
    }

    /**
     * Takes {@code entries} over as a batch, appended to the window; on failure nothing stays referenced, the entries
     * included, and a window the failure may have left with a gap is cleared (it must stay a gap-free run of entries).
     */
    private EntryBatch takeIntoWindow(List<Entry> entries, long startNanos, long arrivedNanos) {
        Entry last = entries.get(entries.size() - 1);
        EntryBatch batch = EntryBatch.endingAt(entries, PositionImpl.get(last.getLedgerId(), last.getEntryId()),
                fanOut.storage);
        try {
            frontier = batch.after();
            DispatchCounters counters = fanOut.owner.counters();
            counters.tailEntriesRead += batch.size();
            EntryWindow window = fanOut.window;
            if (window.size() > 0 && fanOut.storage.normalize(window.after()).compareTo(batch.first()) != 0) {
                window.clear(); // the read position moved on (an operator skip): keep the window gap-free
            }
            window.append(batch);
            counters.persistedToDispatch.recordNanos(startNanos - arrivedNanos, batch.size());
            return batch;
        } catch (RuntimeException | Error e) {
            fanOut.window.clear();
            batch.release();
            throw e;
        }
    }

    /**
     * A tail read found nothing it could return. The entries at the read position belong to a transaction still open:
     * read again after a short wait ({@link #awaitTransaction}). Or the read had waited for new entries and was woken
     * by a write made readable only after the read began (it keeps the max read position it was issued with): read
     * again now.
     */
    private void readAfterNothing() {
        PositionImpl max = fanOut.storage.maxReadPosition();
        if (fanOut.storage.readPosition().compareTo(max) > 0 && max.compareTo(fanOut.storage.lastConfirmed()) < 0) {
            awaitTransaction();
        } else {
            read();
        }
    }

    /**
     * Sends the batch to every consumer waiting at the tail; those that still have permits and stay at the tail keep
     * waiting, the others go to {@code moved}.
     */
    private void serveWaiting(EntryBatch batch, Map<ConsumerConnection, ConnectionSend> sends,
                              List<BroadcastConsumer> moved) {
        boolean atFrontier = waiting.serve(batch, frontier, sends, moved);
        someoneAhead |= waiting.count() > 0 && !atFrontier; // those left all wait further on
    }

    @Override
    void onFailed(ManagedLedgerException e, Object ctx) {
        if (!(ctx instanceof Long) || (Long) ctx != readId) {
            return; // stale: not the read in flight (regression, thirty-second session's review)
        }
        // The managed cursor keeps a read that failed at the end registered as its waiting read (checkForNewEntries
        // fails it without clearing it): every later tail read at the end, after a reset-cursor, failed with
        // ConcurrentWaitCallbackException, for ever (regression, thirty-second session). Any read it still holds
        // is one this dispatcher no longer waits for.
        pending = false;
        if (e instanceof NoMoreEntriesToReadException || e instanceof ConcurrentWaitCallbackException) {
            fanOut.storage.cancelTailRead();
        }
        if (fanOut.isClosed()) {
            return;
        }
        if (e instanceof NoMoreEntriesToReadException) {
            endFound();
            return;
        }
        if (e instanceof NonRecoverableLedgerException && stepOverLostEntries(e)) {
            return;
        }
        retryLater("Tail", e);
    }

    /**
     * Storage can never return the entries at the read position, and the managed cursor did not skip them (it does
     * with {@code autoSkipNonRecoverableData}): the tail read goes on at the next ledger, so that entries only some
     * consumers need do not hold every consumer of the subscription. The consumers waiting at the tail are placed
     * again; those that need entries of the ledger stepped over get them from catch-up reads, which wait for them
     * (nothing is skipped for them). False when there is no next ledger: the read is retried.
     */
    private boolean stepOverLostEntries(ManagedLedgerException e) {
        // The ledger of the read position as it is, the one the managed ledger tried to open (as stock's own skip
        // takes it): normalized, the end of the last ledger with entries becomes the next ledger's start once an
        // entry was written there, and the lost ledger was never left (regression, thirty-ninth session).
        PositionImpl at = fanOut.storage.readPosition();
        PositionImpl next = fanOut.storage.firstOfNextLedger(at.getLedgerId());
        if (next == null) {
            return false;
        }
        fanOut.owner.counters().readFailures++;
        log.warn("{} Tail read: entries from {} can never be read ({}); the tail goes on at {}, consumers that need"
                + " those entries wait for them in catch-up reads", fanOut.name, at, e.getMessage(), next);
        fanOut.storage.seekTail(next);
        frontier = null;
        List<BroadcastConsumer> held = new ArrayList<>(waiting.count());
        waiting.moveAll(held);
        fanOut.placeAll(held);
        return true;
    }

    /**
     * The topic was terminated and everything in it was read: read no more; tell every consumer that acknowledged
     * everything (the others are told by their last acknowledgement). Unless the last entry was confirmed after the
     * read found none: then read it.
     */
    private void endFound() {
        if (moreToRead()) {
            read();
            return;
        }
        fanOut.end.found();
        List<BroadcastConsumer> idle = new ArrayList<>(waiting.count());
        waiting.moveAll(idle);
        for (BroadcastConsumer bc : idle) {
            bc.state = BroadcastConsumer.State.IDLE;
        }
        for (BroadcastConsumer bc : fanOut.owner.attachedConsumers()) { // those without permits too, as stock
            fanOut.end.tellIfDone(bc);
        }
    }
}
