package io.github.pulsarbroadcast.broadcast.dispatch;

import java.util.Set;
import org.apache.bookkeeper.mledger.AsyncCallbacks.ReadEntriesCallback;
import org.apache.bookkeeper.mledger.Position;
import org.apache.bookkeeper.mledger.impl.PositionImpl;

/**
 * What the dispatcher needs of the subscription's managed cursor and the topic's managed ledger: the two reads, the
 * positions, and the durable mark-delete. {@link ManagedCursorStorage} is the real one; the model tests use an
 * in-memory ledger that rolls over, fails reads and deletes entries on demand.
 *
 * <p>Threading: every method may be called from any thread (the dispatcher calls them from its dispatch thread and
 * its scan); callbacks arrive on storage threads.
 */
public interface SubscriptionStorage {

    /**
     * Where the next tail read starts: the managed cursor's read position, or the entry it stands before when it
     * names none.
     */
    PositionImpl readPosition();

    /** The subscription's durable mark-delete position: everything at or below it is deleted for it. */
    PositionImpl markDeleted();

    /** The last entry written to the topic. */
    PositionImpl lastConfirmed();

    /**
     * Whether the topic was terminated and no write is still on its way: no entry will be added after
     * {@link #lastConfirmed}.
     */
    boolean isTerminated();

    /** The topic's ledgers as they are now, to count how far behind the last entry positions are. */
    EntryOffsets entryOffsets();

    /** The position of the entry after {@code position}, crossing ledger boundaries (it may not be written yet). */
    PositionImpl next(PositionImpl position);

    /**
     * The position of the entry before {@code position}, crossing ledger boundaries without reading storage (stock's
     * {@code ManagedLedgerImpl.getPreviousPosition}): {@code (ledger, -1)} when no earlier ledger has an entry.
     */
    PositionImpl previous(PositionImpl position);

    /**
     * {@code position} itself when it names an entry or the next one to be written; otherwise (it points past the
     * end of a ledger that has rolled over, or into a ledger that was removed) the first real entry after it.
     */
    PositionImpl normalize(PositionImpl position);

    /**
     * Reads at most {@code maxEntries} entries at the read position, none past {@link #maxReadPosition} (read when the
     * read starts), waiting for new ones when there are none; {@code ctx} comes back with the answer. The answer is
     * empty when the read position is past the max read position (an open transaction), or became so while the read
     * waited.
     */
    void readTail(int maxEntries, long maxBytes, ReadEntriesCallback callback, Object ctx);

    /**
     * The last entry readers may see now: the entries after it begin with a message of a transaction still open (the
     * topic's transaction buffer, as stock dispatchers read it; {@link PositionImpl#LATEST} without transactions, and
     * {@link PositionImpl#EARLIEST} while the buffer recovers). Tail reads stop there.
     */
    PositionImpl maxReadPosition();

    /** Whether the transaction {@code (mostBits, leastBits)} was aborted: its messages are for no consumer. */
    boolean isTxnAborted(long mostBits, long leastBits);

    /** The first position of the first ledger after ledger {@code ledgerId}; null when there is none. */
    PositionImpl firstOfNextLedger(long ledgerId);

    /** Moves the read position to {@code position}: the next tail read starts there. No tail read may be pending. */
    void seekTail(PositionImpl position);

    /** Cancels a tail read that is waiting for entries; false when there is none waiting (or it already runs). */
    boolean cancelTailRead();

    /**
     * Reads the given existing positions; those already deleted from the subscription are not read and are returned
     * (when that is all of them, the callback is never called).
     */
    Set<? extends Position> replay(Set<PositionImpl> positions, ReadEntriesCallback callback);

    /** Marks the cursor active (its reads may use the entry cache). */
    void setActive();

    /** Moves the durable mark-delete position to {@code position} (the stock cumulative acknowledgement path). */
    void markDelete(PositionImpl position);

    /** Whether entries that can never be read may be skipped ({@code autoSkipNonRecoverableData}). */
    boolean skipNonRecoverableData();
}
