package io.github.pulsarbroadcast.broadcast.dispatch;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.bookkeeper.mledger.impl.PositionImpl;

/**
 * What a topic written with transactions adds to {@link ModelLedger}: entries for no consumer (commit and abort
 * markers, messages of aborted transactions) and the max read position, which the oldest open transaction holds at
 * the entry before its first message, as the topic's transaction buffer does (2.10.5's {@code TopicTransactionBuffer};
 * in the model a transaction's messages are whatever is written while it is open). Reads that go past the max read
 * position are recorded as violations for the model's checks.
 *
 * <p>Threading: single-threaded (the model test's thread).
 */
final class ModelTransactions {

    /** The transaction the model's messages of aborted transactions belong to. */
    static final long ABORTED_TXN = 7;

    /** Entries no consumer may be sent: markers, and messages of aborted transactions. */
    final Set<PositionImpl> withheld = new HashSet<>();
    /** Those of {@link #withheld} written as messages of transaction {@link #ABORTED_TXN} (the others are markers). */
    final Set<PositionImpl> abortedMessages = new HashSet<>();
    /** Aborted transactions, by their most significant bits (the least are 0 in the model). */
    final Set<Long> aborted = new HashSet<>(Set.of(ABORTED_TXN));
    /** The bound each open transaction sets (the last entry written when it opened), oldest first. */
    private final List<PositionImpl> open = new ArrayList<>();
    /**
     * The oldest open transaction's bound; {@link PositionImpl#LATEST} while none is open (everything written may be
     * read).
     */
    PositionImpl maxRead = PositionImpl.LATEST;
    /**
     * The topic has a transaction buffer (the broker's {@code transactionCoordinatorEnabled}): with no transaction
     * open its max read position is the last entry written, not {@link PositionImpl#LATEST}, so a read that waited
     * for entries returns nothing when a write wakes it (the read keeps the bound it was issued with).
     */
    boolean buffered;
    /** Reads of entries past the max read position: each one is a defect. */
    final List<String> violations = new ArrayList<>();

    /** A transaction opens after {@code lastWritten}: what is written from now on waits for its end. */
    void open(PositionImpl lastWritten) {
        open.add(lastWritten);
        maxRead = open.get(0);
    }

    /** The {@code i}-th open transaction (mod their number) ends, committed or aborted. */
    void end(int i) {
        open.remove(i % open.size());
        maxRead = open.isEmpty() ? PositionImpl.LATEST : open.get(0);
    }

    /** Every open transaction ends. */
    void endAll() {
        open.clear();
        maxRead = PositionImpl.LATEST;
    }

    int openCount() {
        return open.size();
    }

    /** The max read position storage answers, {@code lastWritten} being the last entry written. */
    PositionImpl maxReadPosition(PositionImpl lastWritten) {
        return buffered && open.isEmpty() ? lastWritten : maxRead;
    }

    boolean isWithheld(PositionImpl p) {
        return withheld.contains(p);
    }

    /** Records a violation when a read of {@code kind} returns {@code p} past the max read position. */
    void checkRead(String kind, PositionImpl p) {
        if (p.compareTo(maxRead) > 0) {
            violations.add(kind + " read " + p + " past the max read position " + maxRead);
        }
    }
}
