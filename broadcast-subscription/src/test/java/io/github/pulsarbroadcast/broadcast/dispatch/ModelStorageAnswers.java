package io.github.pulsarbroadcast.broadcast.dispatch;

import io.netty.buffer.ByteBuf;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.apache.bookkeeper.mledger.Entry;
import org.apache.bookkeeper.mledger.impl.PositionImpl;

/**
 * The answers {@link ModelLedger} owes its callers, queued and not run (the model test decides when storage
 * answers), the replay answers held back as a slow read would hold them, and every entry buffer made for an answer
 * (a leak once everything is closed, when one is still referenced).
 *
 * <p>Threading: single-threaded (the model test's thread).
 */
final class ModelStorageAnswers {

    private final List<Runnable> completions = new ArrayList<>();
    /** Null: answers come in the order they were queued; else each is a random queued one (out of order). */
    java.util.Random outOfOrder;
    private final ArrayDeque<Runnable> heldReplays = new ArrayDeque<>();
    private final List<ByteBuf> created = new ArrayList<>();
    private final ModelTransactions transactions;

    ModelStorageAnswers(ModelTransactions transactions) {
        this.transactions = transactions;
    }

    /** Queues {@code answer} after the answers already queued. */
    void add(Runnable answer) {
        completions.add(answer);
    }

    /** Holds {@code answer} back until {@link #releaseHeld}. */
    void hold(Runnable answer) {
        heldReplays.add(answer);
    }

    /** Queues the held answers after the answers already queued. */
    void releaseHeld() {
        completions.addAll(heldReplays);
        heldReplays.clear();
    }

    /**
     * Runs one queued answer; false when there is none. With {@link #outOfOrder}, storage answers reads in any order,
     * as BookKeeper does (a catch-up read may answer after a later tail read, a leave or a reset).
     */
    boolean runOne() {
        if (completions.isEmpty()) {
            return false;
        }
        int i = outOfOrder != null ? outOfOrder.nextInt(completions.size()) : 0;
        completions.remove(i).run();
        return true;
    }

    boolean isEmpty() {
        return completions.isEmpty();
    }

    /** Drops the queued answers (not the held ones): the topic is loaded again. */
    void clear() {
        completions.clear();
    }

    /** The entries at {@code positions}, their buffers recorded. */
    List<Entry> entries(List<PositionImpl> positions) {
        List<Entry> out = new ArrayList<>();
        for (PositionImpl p : positions) {
            Entry e = transactions.abortedMessages.contains(p)
                    ? TestEntries.inTransaction(p.getLedgerId(), p.getEntryId(), ModelTransactions.ABORTED_TXN)
                    : transactions.isWithheld(p) ? withheld(p)
                    : TestEntries.entry(p.getLedgerId(), p.getEntryId(), 1);
            created.add(e.getDataBuffer());
            out.add(e);
        }
        return out;
    }

    /**
     * A withheld entry that is no aborted message: a commit marker, or, at every other position since the forty-fourth
     * session, bytes that are no Pulsar message at all (three shapes; chosen by position, so that no draw of the
     * schedule changes). Until then a malformed entry threw out of the fan-out pass: buffers leaked and the tail read
     * was never issued again (a read-only review of the read path).
     */
    private static Entry withheld(PositionImpl p) {
        long n = p.getLedgerId() + p.getEntryId();
        return n % 2 == 0 ? TestEntries.marker(p.getLedgerId(), p.getEntryId())
                : TestEntries.malformed(p.getLedgerId(), p.getEntryId(), (int) (n / 2 % 3));
    }

    /** Every entry buffer made for an answer that is still referenced. */
    List<ByteBuf> unreleased() {
        List<ByteBuf> out = new ArrayList<>();
        for (ByteBuf b : created) {
            if (b.refCnt() > 0) {
                out.add(b);
            }
        }
        return out;
    }
}
