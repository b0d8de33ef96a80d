package io.github.pulsarbroadcast.broadcast.dispatch;

import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.bookkeeper.mledger.AsyncCallbacks.ReadEntriesCallback;
import org.apache.bookkeeper.mledger.ManagedLedgerException;
import org.apache.bookkeeper.mledger.Position;
import org.apache.bookkeeper.mledger.impl.PositionImpl;

/**
 * An in-memory managed ledger and cursor with the behaviour of 2.10.5 that the dispatcher depends on: ledgers roll
 * over (and empty ones disappear, so ledger ids jump), a tail read leaves the read position at
 * {@code (ledger, last + 1)} as {@code OpReadEntry} does, a waiting read is woken only while the cursor is on the
 * ledger's waiting list, replays skip deleted positions and fail on positions that do not exist, reads can be made to
 * fail. Completions are queued, not run, so the model test decides when storage answers. Its ledgers and their
 * position arithmetic are kept in {@link ModelLedgerLayout}, its queued answers and the entry buffers they carry in
 * {@link ModelStorageAnswers}.
 *
 * <p>Threading: single-threaded (the model test's thread).
 */
final class ModelLedger implements SubscriptionStorage {

    private final ModelLedgerLayout layout;
    /** Markers and the max read position of a topic written with transactions. */
    final ModelTransactions transactions = new ModelTransactions();
    private final ModelStorageAnswers answers = new ModelStorageAnswers(transactions);
    private PositionImpl markDeleted;
    private PositionImpl readPosition;
    private final ModelWaitingRead waiting = new ModelWaitingRead();
    /**
     * A waiting read the dispatcher does not know of (as a failed read the managed cursor kept): the next tail read
     * fails with ConcurrentWaitCallbackException, as the managed cursor's, until a cancel drops it.
     */
    boolean strayWaitingRead;
    /** Writes sent and not yet confirmed: while any is, a terminated ledger's last entry may still move. */
    int pendingAdds;
    int failNextReads;
    /** A terminated topic: a tail read with nothing left fails with NoMoreEntriesToRead, as the managed ledger's. */
    private boolean terminated;
    /** Runs once, on the next read of the mark-delete position, after the read (a race placed deterministically). */
    Runnable onNextMarkDeletedRead;
    /** Runs once, in the next normalization, after its result is computed (a race placed deterministically). */
    Runnable onNextNormalize;
    boolean skipNonRecoverable;
    /**
     * How many of the next replays and tail reads throw instead of calling back (as stock's replay threw a
     * NullPointerException on a terminated managed ledger loaded again).
     */
    int replaysThatThrow;
    int tailReadsThatThrow;
    /** Positions that exist but that storage can never return (their bookies' data is gone). */
    final Set<PositionImpl> unreadable = new HashSet<>();
    /** Ledgers whose reads fail as a ledger that does not exist any more (its metadata is gone too). */
    final Set<Long> lostLedgers = new HashSet<>();
    /** Ledgers the managed cursor skipped (stock's skip marks their entries deleted: replays skip them). */
    private final Set<Long> skippedLedgers = new HashSet<>();
    /** Replays answered with a failure. */
    int failedReplays;
    /** While set, replay answers are held back until {@link #releaseHeldReplays} (a slow read). */
    boolean holdReplays;

    ModelLedger(long firstLedger, int rollEvery) {
        this.layout = new ModelLedgerLayout(firstLedger, rollEvery);
        markDeleted = PositionImpl.get(firstLedger, -1);
        readPosition = PositionImpl.get(firstLedger, 0);
    }

    // ----- what the model does to it -----

    /** A time-based rollover: a new, empty ledger after the open one, with no entry written. */
    void rollOver() {
        layout.openNewLedger(false);
    }

    /** Appends one entry (rolling over first when the open ledger is full; {@code skipLedger} leaves a gap). */
    PositionImpl publish(boolean skipLedger) {
        PositionImpl published = layout.append(skipLedger);
        wakeWaitingRead();
        return published;
    }

    private void wakeWaitingRead() {
        int maxEntries = waiting.maxEntries;
        Object ctx = waiting.ctx;
        ReadEntriesCallback woken = waiting.wake();
        if (woken != null) {
            readTail(maxEntries, woken, ctx, waiting.maxRead);
        }
    }

    /**
     * Appends one entry for no consumer: a server-only marker (a commit or abort marker), or with {@code aborted} a
     * message of an aborted transaction.
     */
    PositionImpl publishWithheld(boolean aborted) {
        PositionImpl published = layout.append(false);
        transactions.withheld.add(published);
        if (aborted) {
            transactions.abortedMessages.add(published);
        }
        wakeWaitingRead();
        return published;
    }

    /** Storage answers in any order from now on, drawn from {@code order} ({@link ModelStorageAnswers#outOfOrder}). */
    void answerOutOfOrder(java.util.Random order) {
        answers.outOfOrder = order;
    }

    /** Runs one queued storage answer; false when there is none. */
    boolean completeOne() {
        return answers.runOne();
    }

    boolean hasCompletions() {
        return !answers.isEmpty();
    }

    /** Stops holding replay answers and queues the held ones after the answers already queued. */
    void releaseHeldReplays() {
        holdReplays = false;
        answers.releaseHeld();
    }

    /** Stock {@code removeWaitingCursor}: the read stays armed in the cursor but nothing wakes it. */
    void removeWaitingCursor() {
        waiting.onWaitingList = false;
    }

    /** An operator (TTL, eviction, skip) moves the mark-delete position forward. */
    void moveMarkDeleteForward(PositionImpl to) {
        if (to.compareTo(markDeleted) > 0) {
            markDeleted = to;
            if (readPosition.compareTo(to) <= 0) {
                readPosition = next(to);
            }
        }
    }

    /** An operator's reset-cursor: mark-delete and read position move to {@code to} (back or forward). */
    void resetTo(PositionImpl to) {
        // As ManagedCursorImpl.internalResetCursor: a read waiting for entries stays armed (from the new position).
        markDeleted = to;
        readPosition = next(to);
    }

    /**
     * The topic is loaded again: empty ledgers are dropped and a new one is opened (since the thirty-ninth session;
     * before, the model's last ledger stayed the open one), and the cursor reads from its mark-delete position.
     */
    void reload() {
        layout.openNewLedger(true);
        readPosition = next(markDeleted);
        waiting.disarm();
        answers.clear();
    }

    /** Every entry buffer made for a read that is still referenced (a leak once everything is closed). */
    List<ByteBuf> unreleased() {
        return answers.unreleased();
    }

    /** Every position in (from, to], in order. */
    List<PositionImpl> between(PositionImpl from, PositionImpl to) {
        return layout.between(from, to);
    }

    boolean exists(PositionImpl p) {
        return layout.exists(p);
    }

    // ----- SubscriptionStorage -----

    @Override
    public PositionImpl readPosition() {
        return readPosition;
    }

    @Override
    public PositionImpl markDeleted() {
        PositionImpl read = markDeleted;
        Runnable hook = onNextMarkDeletedRead;
        onNextMarkDeletedRead = null;
        if (hook != null) {
            hook.run(); // after the read: what the hook changes, the caller did not see
        }
        return read;
    }

    @Override
    public PositionImpl lastConfirmed() {
        return layout.lastConfirmed();
    }

    @Override
    public EntryOffsets entryOffsets() {
        return layout.entryOffsets();
    }

    @Override
    public PositionImpl next(PositionImpl position) {
        return layout.next(position);
    }

    @Override
    public PositionImpl previous(PositionImpl position) {
        return layout.previous(position);
    }

    @Override
    public PositionImpl normalize(PositionImpl position) {
        PositionImpl normalized = layout.normalize(position);
        Runnable race = onNextNormalize;
        onNextNormalize = null;
        if (race != null) {
            race.run();
        }
        return normalized;
    }

    @Override
    public void readTail(int maxEntries, long maxBytes, ReadEntriesCallback callback, Object ctx) {
        readTail(maxEntries, callback, ctx, maxReadPosition());
    }

    @Override
    public PositionImpl maxReadPosition() {
        return transactions.maxReadPosition(lastConfirmed());
    }

    @Override
    public boolean isTxnAborted(long mostBits, long leastBits) {
        return leastBits == 0 && transactions.aborted.contains(mostBits);
    }

    /** A tail read bounded by {@code maxRead}, the max read position when it was issued. */
    private void readTail(int maxEntries, ReadEntriesCallback callback, Object ctx, PositionImpl maxRead) {
        if (tailReadsThatThrow > 0) {
            tailReadsThatThrow--;
            throw new NullPointerException("a tail read that throws");
        }
        if (strayWaitingRead) {
            answers.add(() -> callback.readEntriesFailed(
                    new ManagedLedgerException.ConcurrentWaitCallbackException(), ctx));
            return;
        }
        // Stricter than the managed cursor (which fails the read with ConcurrentWaitCallbackException): the
        // dispatcher must never read while a read of its own waits.
        if (waiting.isArmed()) {
            throw new IllegalStateException("a second tail read while one waits");
        }
        if (layout.readOpensOneOf(lostLedgers, readPosition)) {
            failOrSkip(layout.ledgerReadAt(readPosition),
                    new ManagedLedgerException.LedgerNotExistException("No such ledger exists"), maxEntries, callback,
                    ctx);
            return;
        }
        PositionImpl start = layout.tailReadStart(readPosition);
        if (exists(start) && start.compareTo(maxRead) > 0) {
            // As ManagedLedgerImpl.internalReadFromLedger: past the max read position the read returns nothing.
            answers.add(() -> callback.readEntriesComplete(new ArrayList<>(), ctx));
            return;
        }
        List<PositionImpl> positions = new ArrayList<>();
        for (PositionImpl p = start; positions.size() < maxEntries && exists(p) && p.compareTo(maxRead) <= 0;
                p = next(p)) {
            positions.add(p);
        }
        if (positions.isEmpty() && terminated) {
            // As ManagedCursorImpl.checkForNewEntries: the read fails and stays registered as the waiting read, on
            // the ledger's waiting list (a write confirmed later wakes it), until cancelled (another tail read
            // meanwhile throws below).
            waiting.arm(maxEntries, callback, ctx, maxRead); // a publish wakes it
            failAtTheEnd(callback, ctx);
            return;
        }
        if (positions.isEmpty()) {
            waiting.arm(maxEntries, callback, ctx, maxRead); // a publish wakes it
            return;
        }
        // As the managed cursor without autoSkipNonRecoverableData (it reads one ledger at a time): a read that starts
        // at an entry storage lost fails; one that reaches such an entry returns what precedes it.
        int readable = 0;
        while (readable < positions.size() && !isLost(positions.get(readable))) {
            readable++;
        }
        if (readable == 0) {
            failOrSkip(start.getLedgerId(), new ManagedLedgerException.NonRecoverableLedgerException("No such entry"),
                    maxEntries, callback, ctx);
            return;
        }
        positions.subList(readable, positions.size()).clear();
        PositionImpl last = positions.get(positions.size() - 1);
        if (failNextReads > 0) {
            failNextReads--;
            answers.add(() -> callback.readEntriesFailed(new ManagedLedgerException("injected"), ctx));
            return;
        }
        answers.add(() -> {
            // As OpReadEntry.readEntriesComplete: the read position moves when the answer comes, to (ledger, last + 1)
            // even when that ledger rolls over, and only past the mark-delete position (ManagedCursorImpl
            // .setReadPosition): an answer after a reset-cursor to a lower position overwrites it (forty-third
            // session; before, the model moved it when the read was issued).
            PositionImpl after = last.getNext();
            if (after.compareTo(markDeleted) > 0) {
                readPosition = after;
            }
            callback.readEntriesComplete(answers.entries(positions), ctx);
        });
    }

    /**
     * A tail read that storage can never serve: as {@code OpReadEntry.readEntriesFailed}, with
     * {@code autoSkipNonRecoverableData} the managed cursor itself moves its read position to the next ledger and
     * reads on from there, its entries deleted for every cursor (the dispatcher never sees the failure, and nothing
     * counts the entries skipped; since the thirty-ninth session: before, this model failed the read in both cases);
     * without it, or with no next ledger,
     * the read fails. {@code ledgerId}: the ledger the read opened.
     */
    private void failOrSkip(long ledgerId, ManagedLedgerException e, int maxEntries, ReadEntriesCallback callback,
                            Object ctx) {
        PositionImpl next = skipNonRecoverable ? layout.firstOfNextLedger(ledgerId) : null;
        if (next == null) {
            answers.add(() -> callback.readEntriesFailed(e, ctx));
            return;
        }
        skippedLedgers.add(ledgerId); // as ManagedLedgerImpl.skipNonRecoverableLedger, for every cursor
        readPosition = next;
        readTail(maxEntries, Long.MAX_VALUE, callback, ctx);
    }

    private boolean isLost(PositionImpl p) {
        return unreadable.contains(p) || lostLedgers.contains(p.getLedgerId());
    }

    /**
     * Terminates the topic: a tail read that starts once nothing is left fails; one already waiting for entries
     * waits on, as the managed ledger's ({@code ManagedLedgerImpl.asyncTerminate} does not wake its waiting cursors;
     * until the thirty-second session this model failed it, and hid that the dispatcher never found the end then).
     */
    void terminate() {
        terminated = true;
    }

    @Override
    public boolean isTerminated() {
        return terminated && pendingAdds == 0;
    }

    private void failAtTheEnd(ReadEntriesCallback callback, Object ctx) {
        answers.add(() -> callback.readEntriesFailed(
                new ManagedLedgerException.NoMoreEntriesToReadException("terminated"), ctx));
    }

    /**
     * The last cancelled read fails now with NoMoreEntriesToRead, as a cancelled read's delayed check does on a
     * terminated ledger ({@code ManagedCursorImpl.checkForNewEntries} fails the callback it was given whatever
     * happened to its op since).
     */
    void failCancelledRead() {
        ReadEntriesCallback callback = waiting.cancelled;
        Object ctx = waiting.cancelledCtx;
        answers.add(() -> callback.readEntriesFailed(
                new ManagedLedgerException.NoMoreEntriesToReadException("terminated"), ctx));
    }

    @Override
    public PositionImpl firstOfNextLedger(long ledgerId) {
        return layout.firstOfNextLedger(ledgerId);
    }

    @Override
    public void seekTail(PositionImpl position) {
        readPosition = position;
    }

    @Override
    public boolean cancelTailRead() {
        if (strayWaitingRead) {
            strayWaitingRead = false;
            return true;
        }
        return waiting.cancel();
    }

    @Override
    public Set<? extends Position> replay(Set<PositionImpl> positions, ReadEntriesCallback callback) {
        if (replaysThatThrow > 0) {
            replaysThatThrow--;
            throw new NullPointerException("a replay that throws");
        }
        Set<PositionImpl> skipped = new HashSet<>();
        List<PositionImpl> toRead = new ArrayList<>();
        boolean missing = false;
        for (PositionImpl p : positions) {
            if (p.compareTo(markDeleted) <= 0 || skippedLedgers.contains(p.getLedgerId())) {
                skipped.add(p);
            } else {
                missing |= !exists(p);
                transactions.checkRead("a replay", p);
                toRead.add(p);
            }
        }
        if (toRead.isEmpty()) {
            return skipped;
        }
        boolean lost = false;
        for (PositionImpl p : toRead) {
            missing |= unreadable.contains(p);
            lost |= lostLedgers.contains(p.getLedgerId());
        }
        if (missing || lost || failNextReads > 0) {
            failNextReads -= missing || lost ? 0 : 1;
            failedReplays++;
            ManagedLedgerException e = lost ? new ManagedLedgerException.LedgerNotExistException("No such ledger")
                    : missing ? new ManagedLedgerException.NonRecoverableLedgerException("Error while reading ledger")
                    : new ManagedLedgerException("injected");
            answerReplay(() -> callback.readEntriesFailed(e, null));
        } else {
            answerReplay(() -> callback.readEntriesComplete(answers.entries(toRead), null));
        }
        return skipped;
    }

    private void answerReplay(Runnable answer) {
        if (holdReplays) {
            answers.hold(answer);
        } else {
            answers.add(answer);
        }
    }

    @Override
    public void setActive() {
    }

    @Override
    public void markDelete(PositionImpl position) {
        if (position.compareTo(markDeleted) > 0) {
            markDeleted = position;
            // As ManagedCursorImpl.setAcknowledgedPosition: a read position at or below the new mark-delete position
            // moves to the entry after it (forty-fourth session: without it, an answer that could not move the read
            // position past the mark-delete left it there, and the tail read the same entry for ever; a model error,
            // found once failed saves and malformed entries were played: seed 20261207831040, retention 0).
            if (readPosition.compareTo(markDeleted) <= 0) {
                readPosition = next(markDeleted);
            }
        }
    }

    @Override
    public boolean skipNonRecoverableData() {
        return skipNonRecoverable;
    }
}
