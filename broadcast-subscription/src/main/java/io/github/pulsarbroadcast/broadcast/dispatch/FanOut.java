package io.github.pulsarbroadcast.broadcast.dispatch;

import io.github.pulsarbroadcast.broadcast.BroadcastConfig;
import io.github.pulsarbroadcast.broadcast.WindowBudget;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.bookkeeper.mledger.ManagedLedgerException;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The dispatch state machine of one broadcast subscription: which consumer waits where, the window of recent
 * entries, and the two kinds of storage read.
 *
 * <ul>
 *   <li><b>Tail read</b> (one at a time, {@link TailReads}): entries at the frontier go into the {@link EntryWindow}
 *       and straight to every consumer {@code WAITING} at the tail.</li>
 *   <li><b>Window</b>: a consumer a little behind (its permits came late) is {@code PENDING} and served from memory;
 *       flows that arrive together are coalesced into one service pass.</li>
 *   <li><b>Catch-up read</b> (one at a time, {@link CatchUpReads}): a consumer behind the window is
 *       {@code CATCHING_UP}; the read serves every catching-up consumer whose position falls inside it.</li>
 * </ul>
 * Every position a consumer waits at is normalized to a real entry first ({@link SubscriptionStorage#normalize}):
 * a position past the end of a ledger that rolled over names nothing, and a read of it fails forever.
 *
 * <p>Threading: confined to the subscription's dispatch thread; every field is owned by it except {@link #end}, which
 * is thread-safe. Storage callbacks arrive on other threads and only post back.
 */
final class FanOut {

    private static final Logger log = LoggerFactory.getLogger(FanOut.class);

    final SubscriptionEngine owner;
    final SubscriptionStorage storage;
    final BroadcastConfig config;
    final String name;
    final EntryWindow window;
    /** Thread-safe: the acknowledgement path reads it too. */
    final EndOfTopic end;
    private final TailReads tail;
    private final CatchUpReads catchUp;
    final Sending sending;

    private final ArrayDeque<BroadcastConsumer> pending = new ArrayDeque<>();
    /** Consumers whose placing threw, placed again by the next periodic sync ({@link #placeFailedAgain}). */
    private final Set<BroadcastConsumer> placingFailed = Collections.newSetFromMap(new IdentityHashMap<>());
    /** Scratch for {@link #applyInbox}. */
    private final ConsumerInbox.Taken inboxTaken = new ConsumerInbox.Taken();
    private boolean servicePassScheduled;
    private boolean closed;

    FanOut(SubscriptionEngine owner, SubscriptionStorage storage, BroadcastConfig config, WindowBudget budget,
           String name) {
        this.owner = owner;
        this.storage = storage;
        this.config = config;
        this.name = name;
        this.window = new EntryWindow(config.windowMaxEntries(), config.windowMaxBytes(), budget);
        this.end = new EndOfTopic(storage);
        this.sending = new Sending(owner, name);
        this.tail = new TailReads(this);
        this.catchUp = new CatchUpReads(this);
    }

    boolean isClosed() {
        return closed;
    }

    /** The next position a tail read returns. */
    PositionImpl tailFrontier() {
        return tail.frontier();
    }

    // ----- events -----

    void join(BroadcastConsumer bc) {
        if (bc.resumed) {
            bc.cursor.rewind();
            bc.cursor.sending.resetPermits();
        }
        storage.setActive();
        bc.state = BroadcastConsumer.State.IDLE;
        bc.joined = true;
    }

    void flow(BroadcastConsumer bc, int permits) {
        if (bc.isRemoved()) {
            return;
        }
        bc.cursor.sending.addPermits(permits);
        if (bc.state == BroadcastConsumer.State.IDLE) {
            place(bc);
        }
    }

    /** Applies what {@code bc}'s inbox holds: permits, then the redelivery if any, then permits. */
    void applyInbox(BroadcastConsumer bc) {
        ConsumerInbox.Taken t = inboxTaken;
        bc.inbox.takeInto(t);
        // Each step as if it were a task of its own: one that throws does not lose the others.
        try {
            if (t.permitsBefore > 0) {
                flow(bc, t.permitsBefore);
            }
        } finally {
            try {
                if (t.redeliver) {
                    redeliver(bc, t.redeliverEpoch);
                }
            } finally {
                if (t.permitsAfter > 0) {
                    flow(bc, t.permitsAfter);
                }
            }
        }
    }

    void redeliver(BroadcastConsumer bc, long epoch) {
        if (bc.isRemoved()) {
            return;
        }
        if (epoch > bc.epoch) {
            bc.epoch = epoch;
        }
        unplace(bc);
        bc.cursor.rewind();
        if (log.isDebugEnabled()) {
            log.debug("{} Redelivery to {} (epoch {})", name, bc, bc.epoch);
        }
        place(bc);
    }

    void remove(BroadcastConsumer bc) {
        unplace(bc);
        bc.markRemoved();
        if (owner.attachedCount() == 0) {
            release();
        }
    }

    /** The subscription's cursor moved past {@code bc} (eviction, TTL, reset): continue from {@code next}. */
    void skipForward(BroadcastConsumer bc, PositionImpl next) {
        BroadcastConsumer.State before = bc.state;
        unplace(bc);
        bc.cursor.sending.advanceNextTo(next);
        if (before != BroadcastConsumer.State.REMOVED) {
            place(bc);
            if (!bc.isRemoved()) { // not one that left (BroadcastConsumer#markDetached): its id may be gone
                end.tellIfDone(bc); // moved to the end of a terminated topic (clear-backlog, skip)
            }
        }
    }

    /** Entries before {@code position} are needed by no consumer. */
    void trimWindow(PositionImpl position) {
        window.evictBefore(position);
    }

    /** See {@link SubscriptionEngine#waitingCursorDropped}. */
    void rearmTailRead() {
        tail.rearm();
    }

    /** See {@link TailReads#checkTerminated}. */
    void checkTerminated() {
        tail.checkTerminated();
    }

    /** Drops the window and pending reads; consumers stay (used when the cursor was reset or all left). */
    void release() {
        tail.cancel();
        catchUp.invalidate();
        window.clear();
    }

    /** After a reset-cursor: what was read is dropped, and a terminated topic's end is found anew. */
    void cursorWasReset() {
        release();
        tail.cursorWasReset();
    }

    /** Accepts work again after {@link #close} (the subscription resumed after a failed close). */
    void reopen() {
        closed = false;
    }

    void close() {
        closed = true;
        release();
        tail.clear();
        pending.clear();
        catchUp.clear();
        placingFailed.clear();
    }

    // ----- where a consumer waits -----

    /** Places again those of {@code consumers} that are idle (an end of the topic was taken back). */
    void placeIdle(List<BroadcastConsumer> consumers) {
        for (BroadcastConsumer bc : consumers) {
            if (bc.state == BroadcastConsumer.State.IDLE) {
                place(bc);
            }
        }
    }

    void place(BroadcastConsumer bc) {
        if (bc.isRemoved() || closed || !bc.joined) {
            return;
        }
        if (bc.cursor.sending.permits() <= 0) {
            bc.state = BroadcastConsumer.State.IDLE;
            return;
        }
        // The last written entry read before the normalization (it only moves on): read after it, a write in between
        // could leave a position past the old last entry (it names none) looking written (regression, thirty-ninth
        // session's second review: such a consumer then waited in a catch-up read that could never succeed).
        PositionImpl written = storage.lastConfirmed();
        PositionImpl next = storage.normalize(bc.cursor.sending.next());
        PositionImpl frontier = tail.frontier();
        int toFrontier = next.compareTo(frontier);
        if (toFrontier < 0 && next.compareTo(written) > 0) {
            // Nothing was written between: it waits for the next entry where the tail read does. (After a topic load
            // the last ledger with entries is followed by an empty one; a tail read stepped over a lost last ledger
            // stands in the empty one, the consumers that had everything just after the lost one's end. Regression,
            // thirty-ninth session: a catch-up read of that position spun for ever on the dispatch thread.)
            next = frontier;
            toFrontier = 0;
        }
        bc.cursor.sending.advanceNextTo(next);
        if (toFrontier >= 0) {
            tail.await(bc, toFrontier > 0);
        } else if (window.covers(next)) {
            bc.state = BroadcastConsumer.State.PENDING;
            pending.add(bc);
            scheduleServicePass();
        } else {
            catchUp.await(bc, next);
        }
    }

    private void unplace(BroadcastConsumer bc) {
        if (bc.state == BroadcastConsumer.State.WAITING) {
            tail.forget(bc);
        } else if (bc.state == BroadcastConsumer.State.CATCHING_UP) {
            catchUp.forget(bc);
        }
        // PENDING consumers stay in the queue; the service pass skips those no longer PENDING.
        bc.state = BroadcastConsumer.State.IDLE;
    }

    /**
     * Puts consumers back where they belong after a read served them. One whose placing throws (a defect) stays
     * {@code IDLE}, where its next flow or the next periodic sync places it again ({@link #placeFailedAgain}), and the
     * others are still placed (a review, forty-fourth session: the rest were left in no list).
     */
    void placeAll(List<BroadcastConsumer> consumers) {
        for (BroadcastConsumer bc : consumers) {
            if (bc.state != BroadcastConsumer.State.REMOVED) {
                bc.state = BroadcastConsumer.State.IDLE;
                try {
                    place(bc);
                } catch (RuntimeException e) {
                    // Out of any list it may have joined before the throw (a read issued after listing it), or it
                    // would be listed twice at its next placing (a review).
                    tail.forget(bc);
                    catchUp.forget(bc);
                    bc.state = BroadcastConsumer.State.IDLE;
                    // One ERROR with its stack per wave, not per consumer: a defect that fails every placing would
                    // otherwise log every consumer every sync.
                    if (placingFailed.isEmpty()) {
                        log.error("{} Placing consumer {} failed; the next periodic sync places it again (further"
                                + " failures until then at DEBUG)", name, bc, e);
                    } else if (log.isDebugEnabled()) {
                        log.debug("{} Placing consumer {} failed too: {}", name, bc, e.toString());
                    }
                    placingFailed.add(bc);
                }
            }
        }
    }

    /**
     * Places again the consumers whose placing threw and that are still idle (periodic sync): a client sends no flow
     * while it holds permits, so without this such a consumer would wait until it reconnects (left by the
     * forty-fourth note).
     */
    void placeFailedAgain() {
        if (placingFailed.isEmpty()) {
            return;
        }
        List<BroadcastConsumer> again = new ArrayList<>(placingFailed.size());
        for (BroadcastConsumer bc : placingFailed) {
            if (bc.state == BroadcastConsumer.State.IDLE) {
                again.add(bc);
            }
        }
        placingFailed.clear();
        placeAll(again);
        if (!placingFailed.isEmpty()) {
            log.warn("{} Placing {} of {} consumers failed again; the next periodic sync tries again", name,
                    placingFailed.size(), again.size());
        }
    }

    // ----- window service -----

    private void scheduleServicePass() {
        if (!servicePassScheduled) {
            servicePassScheduled = true;
            owner.post(this::servicePass);
        }
    }

    /** Serves every PENDING consumer from the window, all flows since the last pass at once. */
    private void servicePass() {
        servicePassScheduled = false;
        Map<ConsumerConnection, ConnectionSend> sends = new IdentityHashMap<>();
        List<BroadcastConsumer> served = new ArrayList<>();
        for (BroadcastConsumer bc = pending.poll(); bc != null; bc = pending.poll()) {
            if (bc.state != BroadcastConsumer.State.PENDING) {
                continue;
            }
            bc.state = BroadcastConsumer.State.IDLE;
            if (window.coversNextOf(bc.cursor)) {
                sending.sendFrom(window, window.indexAtOrAfterNextOf(bc.cursor), bc, sends);
            }
            served.add(bc);
        }
        sending.submit(sends);
        placeAll(served);
    }

    // ----- read failures -----

    /** Logs a failed read and tells whether to retry; the caller backs off. */
    void countReadFailure(String kind, ManagedLedgerException e, long retryInMs) {
        owner.counters().readFailures++;
        log.warn("{} {} read failed (failures so far: {}), retrying in {} ms: {}", name, kind,
                owner.counters().readFailures, retryInMs, e.getMessage());
    }

    /**
     * For logs and test failures, from any thread: only the window's volatile counts (the window's entries and the
     * tail's frontier are the dispatch thread's, and reading the frontier could write it; a read-only review).
     */
    @Override
    public String toString() {
        return "FanOut{window=" + window.size() + " entries (" + window.bytes() + " bytes)}";
    }
}
