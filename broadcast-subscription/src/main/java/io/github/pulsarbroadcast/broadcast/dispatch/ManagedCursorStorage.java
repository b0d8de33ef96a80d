package io.github.pulsarbroadcast.broadcast.dispatch;

import java.util.Set;
import org.apache.bookkeeper.mledger.AsyncCallbacks.ReadEntriesCallback;
import org.apache.bookkeeper.mledger.ManagedCursor;
import org.apache.bookkeeper.mledger.Position;
import org.apache.bookkeeper.mledger.impl.ManagedLedgerImpl;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.broker.service.persistent.PersistentTopic;
import org.apache.pulsar.client.api.transaction.TxnID;

/**
 * {@link SubscriptionStorage} over the subscription's real managed cursor and the topic's managed ledger.
 * Positions are normalized with the ledger's own {@code isValidPosition} and {@code getNextValidPosition}: after a
 * read that ends at a ledger's last entry the cursor's read position is {@code (ledger, last + 1)}, which names no
 * entry once the ledger has rolled over.
 *
 * <p>Threading: stateless beyond final references; any thread, as the managed cursor and ledger are.
 */
final class ManagedCursorStorage implements SubscriptionStorage {

    private final ManagedCursor cursor;
    private final ManagedLedgerImpl ledger;
    /** The topic's transaction buffer answers {@link #maxReadPosition} and {@link #isTxnAborted}. */
    private final PersistentTopic topic;
    private final BroadcastSubscription subscription;
    private final boolean skipNonRecoverable;

    ManagedCursorStorage(ManagedCursor cursor, PersistentTopic topic, BroadcastSubscription subscription,
                         boolean skipNonRecoverable) {
        this.cursor = cursor;
        this.ledger = (ManagedLedgerImpl) topic.getManagedLedger();
        this.topic = topic;
        this.subscription = subscription;
        this.skipNonRecoverable = skipNonRecoverable;
    }

    @Override
    public PositionImpl readPosition() {
        PositionImpl read = (PositionImpl) cursor.getReadPosition();
        return read.getEntryId() < 0 ? normalize(read) : read;
    }

    @Override
    public PositionImpl markDeleted() {
        return (PositionImpl) cursor.getMarkDeletedPosition();
    }

    @Override
    public PositionImpl lastConfirmed() {
        return (PositionImpl) ledger.getLastConfirmedEntry();
    }

    @Override
    public boolean isTerminated() {
        // The ledger says "terminated" as soon as termination begins; writes already sent may still confirm (and
        // move the last entry) until none is pending.
        return ledger.isTerminated() && ledger.getPendingAddEntriesCount() == 0;
    }

    @Override
    public EntryOffsets entryOffsets() {
        java.util.TreeMap<Long, Long> entries = new java.util.TreeMap<>();
        ledger.getLedgersInfo().forEach((id, info) -> entries.put(id, info.getEntries()));
        return EntryOffsets.of(entries, lastConfirmed());
    }

    @Override
    public PositionImpl next(PositionImpl position) {
        return ledger.getNextValidPosition(position);
    }

    @Override
    public PositionImpl previous(PositionImpl position) {
        return ledger.getPreviousPosition(position);
    }

    @Override
    public PositionImpl normalize(PositionImpl position) {
        if (ledger.isValidPosition(position)) {
            return position;
        }
        PositionImpl next = ledger.getNextValidPosition(position);
        return next.compareTo(position) > 0 ? next : position;
    }

    /**
     * A read from the cursor's read position, moved first to the entry it stands before when it names none. Stock's
     * reset-cursor to the earliest position leaves the read position at
     * {@code (first ledger, -1)}, which no read can serve (BookKeeper refuses entry -1, for ever); stock's own
     * dispatchers never read from there, as they rewind the cursor to the entry after the mark-delete position when
     * a consumer joins. (Regression, twenty-seventh session: every consumer of a subscription reset to the earliest
     * position stopped receiving, new messages included, until the topic was unloaded.)
     */
    @Override
    public void readTail(int maxEntries, long maxBytes, ReadEntriesCallback callback, Object ctx) {
        PositionImpl read = (PositionImpl) cursor.getReadPosition();
        if (read.getEntryId() < 0) {
            cursor.seek(normalize(read));
        }
        cursor.asyncReadEntriesOrWait(maxEntries, maxBytes, callback, ctx, maxReadPosition());
    }

    @Override
    public PositionImpl maxReadPosition() {
        return topic.getMaxReadPosition();
    }

    @Override
    public boolean isTxnAborted(long mostBits, long leastBits) {
        return topic.isTxnAborted(new TxnID(mostBits, leastBits));
    }

    @Override
    public PositionImpl firstOfNextLedger(long ledgerId) {
        Long next = ledger.getLedgersInfo().ceilingKey(ledgerId + 1);
        return next == null ? null : PositionImpl.get(next, 0);
    }

    @Override
    public void seekTail(PositionImpl position) {
        cursor.seek(position);
    }

    @Override
    public boolean cancelTailRead() {
        return cursor.cancelPendingReadRequest();
    }

    /** Stock's replay, but on a terminated ledger, where it may throw instead ({@link TerminatedLedgerReplay}). */
    @Override
    public Set<? extends Position> replay(Set<PositionImpl> positions, ReadEntriesCallback callback) {
        if (ledger.isTerminated()) {
            return TerminatedLedgerReplay.replay(ledger, cursor, positions, callback);
        }
        return cursor.asyncReplayEntries(positions, callback, null, true);
    }

    @Override
    public void setActive() {
        cursor.setActive();
    }

    @Override
    public void markDelete(PositionImpl position) {
        subscription.markDeleteUpTo(position);
    }

    @Override
    public boolean skipNonRecoverableData() {
        return skipNonRecoverable;
    }
}
