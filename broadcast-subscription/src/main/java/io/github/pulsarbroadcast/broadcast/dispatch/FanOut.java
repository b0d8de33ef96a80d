package io.github.pulsarbroadcast.broadcast.dispatch;

import io.github.pulsarbroadcast.broadcast.BroadcastConfig;
import io.github.pulsarbroadcast.broadcast.cnx.BroadcastServerCnx;
import io.github.pulsarbroadcast.broadcast.cursor.PositionSequence;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.bookkeeper.mledger.AsyncCallbacks.ReadEntriesCallback;
import org.apache.bookkeeper.mledger.Entry;
import org.apache.bookkeeper.mledger.ManagedCursor;
import org.apache.bookkeeper.mledger.ManagedLedgerException;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The dispatch state machine of one broadcast subscription: which consumer waits where, the window of recent
 * entries, and the two kinds of storage read.
 *
 * <ul>
 *   <li><b>Tail read</b> (one at a time): the managed cursor's {@code asyncReadEntriesOrWait} at the frontier. Its
 *       entries go into the {@link EntryWindow} and straight to every consumer {@code WAITING} at the tail.</li>
 *   <li><b>Window</b>: a consumer a little behind (its permits came late) is {@code PENDING} and served from memory;
 *       flows that arrive together are coalesced into one service pass.</li>
 *   <li><b>Catch-up read</b> (one at a time): a consumer behind the window is {@code CATCHING_UP}; the read starts at
 *       the lowest such position and serves every catching-up consumer whose position falls inside it, so consumers
 *       at the same position share one read. Reads go through the broker's entry cache.</li>
 * </ul>
 * Every pass groups its sends by connection ({@link ConnectionSend}).
 *
 * <p>Threading: confined to the subscription's dispatch thread (the subscription-keyed executor); every field is
 * owned by it. Storage callbacks arrive on other threads and only {@link #post} back.
 */
final class FanOut {

    private static final Logger log = LoggerFactory.getLogger(FanOut.class);
    private static final long READ_RETRY_MS = 1000;

    private final BroadcastDispatcher owner;
    private final ManagedCursor cursor;
    private final PositionSequence sequence;
    private final BroadcastConfig config;
    private final String name;
    private final EntryWindow window;

    private final Map<BroadcastServerCnx, List<BroadcastConsumer>> waiting = new IdentityHashMap<>();
    private int waitingCount;
    private final ArrayDeque<BroadcastConsumer> pending = new ArrayDeque<>();
    private final TreeMap<PositionImpl, List<BroadcastConsumer>> catchingUp = new TreeMap<>();

    private boolean tailReadPending;
    private boolean catchUpReadPending;
    /** The range the catch-up read in flight asked for. */
    private PositionImpl catchUpRequestedFrom;
    private PositionImpl catchUpRequestedUpTo;
    private boolean servicePassScheduled;
    private boolean closed;
    /** The next position a tail read returns; refreshed from the cursor whenever no tail read is in flight. */
    private PositionImpl frontier;

    FanOut(BroadcastDispatcher owner, ManagedCursor cursor, PositionSequence sequence, BroadcastConfig config,
           String name) {
        this.owner = owner;
        this.cursor = cursor;
        this.sequence = sequence;
        this.config = config;
        this.name = name;
        this.window = new EntryWindow(config.windowMaxEntries(), config.windowMaxBytes());
    }

    private void post(Runnable task) {
        owner.post(task);
    }

    // ----- events -----

    void join(BroadcastConsumer bc, boolean resumed) {
        if (resumed) {
            bc.cursor.rewind(sequence);
            bc.cursor.resetPermits();
        }
        cursor.setActive();
        bc.state = BroadcastConsumer.State.IDLE;
    }

    void flow(BroadcastConsumer bc, int permits) {
        if (bc.isRemoved()) {
            return;
        }
        bc.cursor.addPermits(permits);
        if (bc.state == BroadcastConsumer.State.IDLE) {
            place(bc);
        }
    }

    void redeliver(BroadcastConsumer bc, long epoch) {
        if (bc.isRemoved()) {
            return;
        }
        if (epoch > bc.consumer.getConsumerEpoch()) {
            bc.consumer.setConsumerEpoch(epoch);
        }
        unplace(bc);
        bc.cursor.rewind(sequence);
        place(bc);
    }

    void remove(BroadcastConsumer bc) {
        unplace(bc);
        bc.markRemoved();
        if (owner.memberCount() == 0) {
            release();
        }
    }

    /** The subscription's cursor moved past {@code bc} (eviction, TTL, reset): continue from {@code next}. */
    void skipForward(BroadcastConsumer bc, PositionImpl next) {
        BroadcastConsumer.State before = bc.state;
        unplace(bc);
        bc.cursor.advanceNextTo(next);
        if (before != BroadcastConsumer.State.REMOVED) {
            place(bc);
        }
    }

    /** Entries before {@code position} are needed by no consumer. */
    void trimWindow(PositionImpl position) {
        window.evictBefore(position);
    }

    /** Drops the window and pending reads; consumers stay (used when the cursor was reset or all left). */
    void release() {
        if (tailReadPending && cursor.cancelPendingReadRequest()) {
            tailReadPending = false;
        }
        window.clear();
        frontier = null;
    }

    /** Accepts work again after {@link #close} (the subscription resumed after a failed close). */
    void reopen() {
        closed = false;
    }

    void close() {
        closed = true;
        release();
        waiting.clear();
        waitingCount = 0;
        pending.clear();
        catchingUp.clear();
    }

    // ----- where a consumer waits -----

    private void place(BroadcastConsumer bc) {
        if (bc.isRemoved() || closed) {
            return;
        }
        if (bc.cursor.permits() <= 0) {
            bc.state = BroadcastConsumer.State.IDLE;
            return;
        }
        PositionImpl next = bc.cursor.next();
        if (next.compareTo(frontier()) >= 0) {
            bc.state = BroadcastConsumer.State.WAITING;
            waiting.computeIfAbsent(bc.cnx, k -> new ArrayList<>()).add(bc);
            waitingCount++;
            readTail();
        } else if (window.covers(next)) {
            bc.state = BroadcastConsumer.State.PENDING;
            pending.add(bc);
            scheduleServicePass();
        } else {
            bc.state = BroadcastConsumer.State.CATCHING_UP;
            catchingUp.computeIfAbsent(next, k -> new ArrayList<>()).add(bc);
            readCatchUp();
        }
    }

    private void unplace(BroadcastConsumer bc) {
        if (bc.state == BroadcastConsumer.State.WAITING) {
            List<BroadcastConsumer> list = waiting.get(bc.cnx);
            if (list != null && list.remove(bc)) {
                waitingCount--;
                if (list.isEmpty()) {
                    waiting.remove(bc.cnx);
                }
            }
        } else if (bc.state == BroadcastConsumer.State.CATCHING_UP) {
            List<BroadcastConsumer> list = catchingUp.get(bc.cursor.next());
            if (list != null && list.remove(bc) && list.isEmpty()) {
                catchingUp.remove(bc.cursor.next());
            }
        }
        // PENDING consumers stay in the queue; the service pass skips those no longer PENDING.
        bc.state = BroadcastConsumer.State.IDLE;
    }

    private PositionImpl frontier() {
        if (!tailReadPending || frontier == null) {
            frontier = (PositionImpl) cursor.getReadPosition();
        }
        return frontier;
    }

    // ----- tail reads -----

    private void readTail() {
        if (tailReadPending || closed || waitingCount == 0) {
            return;
        }
        tailReadPending = true;
        frontier();
        cursor.asyncReadEntriesOrWait(config.maxReadBatchSize(), config.windowMaxBytes(), tailCallback, null,
                PositionImpl.LATEST);
    }

    private final ReadEntriesCallback tailCallback = new ReadEntriesCallback() {
        @Override
        public void readEntriesComplete(List<Entry> entries, Object ctx) {
            post(() -> onTailEntries(entries));
        }

        @Override
        public void readEntriesFailed(ManagedLedgerException exception, Object ctx) {
            post(() -> onReadFailed(exception, true));
        }
    };

    private void onTailEntries(List<Entry> entries) {
        tailReadPending = false;
        if (closed || entries.isEmpty() || owner.memberCount() == 0) {
            entries.forEach(Entry::release);
            readTail();
            return;
        }
        EntryBatch batch = EntryBatch.of(entries, (PositionImpl) cursor.getReadPosition());
        frontier = batch.after();
        owner.countTailRead(batch.size());
        window.append(batch);
        Map<BroadcastServerCnx, ConnectionSend> sends = new IdentityHashMap<>();
        List<BroadcastConsumer> moved = new ArrayList<>();
        for (Iterator<List<BroadcastConsumer>> groups = waiting.values().iterator(); groups.hasNext(); ) {
            List<BroadcastConsumer> group = groups.next();
            int kept = 0;
            for (int i = 0; i < group.size(); i++) {
                BroadcastConsumer bc = group.get(i);
                sendFrom(batch, batch.indexAtOrAfter(bc.cursor.next()), bc, sends);
                if (bc.cursor.permits() > 0 && bc.cursor.next().compareTo(frontier) >= 0) {
                    group.set(kept++, bc);
                } else {
                    moved.add(bc);
                }
            }
            waitingCount -= group.size() - kept;
            group.subList(kept, group.size()).clear();
            if (group.isEmpty()) {
                groups.remove();
            }
        }
        submit(sends);
        batch.release();
        for (BroadcastConsumer bc : moved) {
            bc.state = BroadcastConsumer.State.IDLE;
            place(bc);
        }
        readTail();
    }

    private void onReadFailed(ManagedLedgerException e, boolean tail) {
        if (tail) {
            tailReadPending = false;
        } else {
            catchUpReadPending = false;
        }
        if (closed) {
            return;
        }
        log.warn("{} {} read failed, retrying in {} ms: {}", name, tail ? "Tail" : "Catch-up", READ_RETRY_MS,
                e.getMessage());
        owner.schedule(() -> {
            if (tail) {
                readTail();
            } else {
                readCatchUp();
            }
        }, READ_RETRY_MS);
    }

    // ----- window service -----

    private void scheduleServicePass() {
        if (!servicePassScheduled) {
            servicePassScheduled = true;
            post(this::servicePass);
        }
    }

    /** Serves every PENDING consumer from the window, all flows since the last pass at once. */
    private void servicePass() {
        servicePassScheduled = false;
        Map<BroadcastServerCnx, ConnectionSend> sends = new IdentityHashMap<>();
        List<BroadcastConsumer> served = new ArrayList<>();
        for (BroadcastConsumer bc = pending.poll(); bc != null; bc = pending.poll()) {
            if (bc.state != BroadcastConsumer.State.PENDING) {
                continue;
            }
            bc.state = BroadcastConsumer.State.IDLE;
            if (window.covers(bc.cursor.next())) {
                sendFrom(window, window.indexAtOrAfter(bc.cursor.next()), bc, sends);
            }
            served.add(bc);
        }
        submit(sends);
        for (BroadcastConsumer bc : served) {
            place(bc);
        }
    }

    // ----- catch-up reads -----

    private void readCatchUp() {
        if (catchUpReadPending || closed || catchingUp.isEmpty()) {
            return;
        }
        PositionImpl first = catchingUp.firstKey();
        // Read up to the window if the window holds what follows, else up to the tail (the window may have a gap
        // after the cursor was moved forward).
        PositionImpl limit = window.size() > 0 && first.compareTo(window.firstPosition()) < 0
                ? window.firstPosition() : frontier();
        // Read no more than the consumers at the lowest position can take now: the rest would be read again.
        int wanted = 1;
        for (BroadcastConsumer bc : catchingUp.get(first)) {
            wanted = Math.max(wanted, bc.cursor.permits());
        }
        int count = Math.min(config.maxReadBatchSize(), wanted);
        TreeSet<PositionImpl> positions = new TreeSet<>();
        for (PositionImpl p = first; positions.size() < count
                && p.compareTo(limit) < 0; p = sequence.next(p)) {
            positions.add(p);
        }
        if (positions.isEmpty()) {
            // The window or the tail caught up with them meanwhile.
            replaceAll(new ArrayList<>(catchingUp.values()));
            return;
        }
        catchUpReadPending = true;
        catchUpRequestedFrom = positions.first();
        catchUpRequestedUpTo = positions.last();
        if (cursor.asyncReplayEntries(positions, catchUpCallback, null, true).size() == positions.size()) {
            // Every position was already deleted from the subscription: 2.10 then never calls back.
            post(() -> onCatchUpEntries(new ArrayList<>()));
        }
    }

    private final ReadEntriesCallback catchUpCallback = new ReadEntriesCallback() {
        @Override
        public void readEntriesComplete(List<Entry> entries, Object ctx) {
            post(() -> onCatchUpEntries(entries));
        }

        @Override
        public void readEntriesFailed(ManagedLedgerException exception, Object ctx) {
            post(() -> onReadFailed(exception, false));
        }
    };

    private void onCatchUpEntries(List<Entry> entries) {
        catchUpReadPending = false;
        if (closed) {
            entries.forEach(Entry::release);
            return;
        }
        PositionImpl upTo = catchUpRequestedUpTo;
        EntryBatch batch = EntryBatch.of(entries, sequence.next(upTo));
        owner.countCatchUpRead(batch.size());
        // Everyone whose position lies in the requested range is served from this one read; positions the read
        // skipped were already deleted from the subscription, so those consumers simply move past them. A consumer
        // below the range (it arrived while the read was in flight) waits for a read of its own.
        Map<PositionImpl, List<BroadcastConsumer>> covered = catchingUp.subMap(catchUpRequestedFrom, true, upTo,
                true);
        List<List<BroadcastConsumer>> groups = new ArrayList<>(covered.values());
        covered.clear();
        Map<BroadcastServerCnx, ConnectionSend> sends = new IdentityHashMap<>();
        for (List<BroadcastConsumer> group : groups) {
            for (BroadcastConsumer bc : group) {
                bc.state = BroadcastConsumer.State.IDLE;
                sendFrom(batch, batch.indexAtOrAfter(bc.cursor.next()), bc, sends);
                if (bc.cursor.permits() > 0 && bc.cursor.next().compareTo(batch.after()) < 0) {
                    bc.cursor.advanceNextTo(batch.after());
                }
            }
        }
        submit(sends);
        batch.release();
        replaceAll(groups);
        readCatchUp();
    }

    private void replaceAll(List<List<BroadcastConsumer>> groups) {
        for (List<BroadcastConsumer> group : groups) {
            for (BroadcastConsumer bc : new ArrayList<>(group)) {
                if (bc.state == BroadcastConsumer.State.CATCHING_UP) {
                    unplace(bc);
                }
                place(bc);
            }
        }
    }

    // ----- sending -----

    /** Sends entries from {@code source}, starting at {@code index}, while the consumer has permits. */
    private void sendFrom(EntrySource source, int index, BroadcastConsumer bc,
                          Map<BroadcastServerCnx, ConnectionSend> sends) {
        if (index >= source.size() || bc.cursor.permits() <= 0) {
            return;
        }
        ConnectionSend send = sends.get(bc.cnx);
        if (send == null) { // not computeIfAbsent: its capturing lambda would allocate per consumer
            send = new ConnectionSend(owner.topicName(), owner.partitionIndex());
            sends.put(bc.cnx, send);
        }
        send.startConsumer(bc, bc.consumer.getConsumerEpoch());
        for (int i = index; i < source.size() && bc.cursor.permits() > 0; i++) {
            WindowEntry e = source.get(i);
            PositionImpl following = i + 1 < source.size() ? source.get(i + 1).position : source.after();
            if (bc.cursor.isIndividuallyAcknowledged(e.position)) {
                bc.cursor.skip(following);
            } else {
                send.addEntry(e);
                bc.cursor.sent(e.position, following, e.messages);
            }
        }
        send.endConsumer();
    }

    private void submit(Map<BroadcastServerCnx, ConnectionSend> sends) {
        for (Map.Entry<BroadcastServerCnx, ConnectionSend> e : sends.entrySet()) {
            ConnectionSend send = e.getValue();
            if (send.isEmpty()) {
                send.release();
            } else {
                owner.countSendTask();
                e.getKey().ctx().executor().execute(send);
            }
        }
    }
}
