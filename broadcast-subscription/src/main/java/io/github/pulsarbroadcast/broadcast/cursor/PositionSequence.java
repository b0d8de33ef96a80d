package io.github.pulsarbroadcast.broadcast.cursor;

import org.apache.bookkeeper.mledger.impl.PositionImpl;

/**
 * The order of entries in a managed ledger: which position follows a given one. Entry ids are contiguous within a
 * ledger, but a topic rolls over to new ledgers, so "next" must ask the ledger
 * ({@code ManagedLedgerImpl::getNextValidPosition}).
 *
 * <p>Threading: implementations must be safe to call from any thread.
 */
@FunctionalInterface
public interface PositionSequence {

    /** The position of the entry after {@code position} (which may not have been written yet). */
    PositionImpl next(PositionImpl position);
}
