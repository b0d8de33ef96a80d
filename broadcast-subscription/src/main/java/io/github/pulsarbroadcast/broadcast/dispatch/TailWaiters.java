package io.github.pulsarbroadcast.broadcast.dispatch;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.bookkeeper.mledger.impl.PositionImpl;

/**
 * The consumers waiting at the tail for the next tail read ({@link TailReads}), grouped by connection so that a batch
 * is written to each connection once, not once per consumer.
 *
 * <p>Threading: confined to the subscription's dispatch thread (with its {@link FanOut}).
 */
final class TailWaiters {

    private final FanOut fanOut;
    private final Map<ConsumerConnection, List<BroadcastConsumer>> waiting = new IdentityHashMap<>();
    private int count;
    /** Scratch of {@link #serve}, reset at its start (no allocation per pass). */
    private final Normalized last = new Normalized();

    TailWaiters(FanOut fanOut) {
        this.fanOut = fanOut;
    }

    int count() {
        return count;
    }

    void add(BroadcastConsumer bc) {
        waiting.computeIfAbsent(bc.cnx, k -> new ArrayList<>()).add(bc);
        count++;
    }

    /** Whether {@code bc} waited. */
    boolean remove(BroadcastConsumer bc) {
        List<BroadcastConsumer> list = waiting.get(bc.cnx);
        if (list == null || !list.remove(bc)) {
            return false;
        }
        count--;
        if (list.isEmpty()) {
            waiting.remove(bc.cnx);
        }
        return true;
    }

    void clear() {
        waiting.clear();
        count = 0;
    }

    /** Moves every waiting consumer to {@code moved}. */
    void moveAll(List<BroadcastConsumer> moved) {
        for (List<BroadcastConsumer> group : waiting.values()) {
            moved.addAll(group);
        }
        clear();
    }

    /** The lowest next position of the waiting consumers, or null when one waits at or before {@code at}. */
    PositionImpl lowestBeyond(PositionImpl at) {
        PositionImpl lowest = null;
        for (List<BroadcastConsumer> group : waiting.values()) {
            for (int i = 0; i < group.size(); i++) {
                BroadcastConsumer bc = group.get(i);
                if (bc.cursor.sending.compareNextTo(at) <= 0) {
                    return null; // one waits at the read position (usually the first looked at): nothing to skip
                }
                if (lowest == null || bc.cursor.sending.compareNextTo(lowest) < 0) {
                    lowest = bc.cursor.sending.next();
                }
            }
        }
        return lowest;
    }

    /**
     * Sends the batch to every waiting consumer; those that still have permits and stay at or past {@code frontier}
     * keep waiting, the others go to {@code moved}. Returns whether one of those kept waits at the frontier.
     */
    boolean serve(EntryBatch batch, PositionImpl frontier, Map<ConsumerConnection, ConnectionSend> sends,
                  List<BroadcastConsumer> moved) {
        // Consumers waiting at the tail share one next position (the previous batch's after()): normalize it once,
        // not per consumer (at the tail it is not a valid position yet, so each call would ask the ledger).
        last.reset();
        boolean atFrontier = false;
        for (Iterator<Map.Entry<ConsumerConnection, List<BroadcastConsumer>>> groups = waiting.entrySet().iterator();
                groups.hasNext(); ) {
            Map.Entry<ConsumerConnection, List<BroadcastConsumer>> byConnection = groups.next();
            List<BroadcastConsumer> group = byConnection.getValue();
            int kept = 0;
            int i = 0;
            try {
                // Once per connection, not per consumer; inside the try, so that a throw moves this group too.
                ConnectionSend send = fanOut.sending.sendFor(byConnection.getKey(), sends);
                for (; i < group.size(); i++) {
                    BroadcastConsumer bc = group.get(i);
                    if (bc.isRemoved()) {
                        moved.add(bc); // it left (BroadcastConsumer#markDetached): placing it drops it
                        continue;
                    }
                    if (last.of(bc).compareTo(batch.get(0).position) < 0) {
                        // It waits for an entry before this read (the read position moved on while it joined): serving
                        // it from here would skip that entry. It goes to the window or a catch-up read instead.
                        moved.add(bc);
                        continue;
                    }
                    fanOut.sending.sendFrom(batch, batch.indexAtOrAfterNextOf(bc.cursor), bc, send);
                    int toFrontier = bc.cursor.sending.compareNextTo(frontier);
                    if (bc.cursor.sending.permits() > 0 && toFrontier >= 0) {
                        atFrontier |= toFrontier == 0;
                        if (kept != i) { // a store into the long-lived list only where it changes (G1 card marks)
                            group.set(kept, bc);
                        }
                        kept++;
                    } else {
                        moved.add(bc);
                    }
                }
            } catch (RuntimeException | Error e) {
                // The lists stay whole (two read-only reviews, forty-fourth session): those before the one that threw
                // were kept or moved; it and everyone not served yet are moved (left waiting, they would wait for a
                // write after this batch, which the retry reads past).
                moved.addAll(group.subList(i, group.size()));
                keep(groups, group, kept);
                while (groups.hasNext()) {
                    List<BroadcastConsumer> rest = groups.next().getValue();
                    moved.addAll(rest);
                    keep(groups, rest, 0);
                }
                throw e;
            }
            keep(groups, group, kept);
        }
        return atFrontier;
    }

    /** Keeps the first {@code kept} of the group just iterated; removes the group from the map when that is none. */
    private void keep(Iterator<Map.Entry<ConsumerConnection, List<BroadcastConsumer>>> groups,
                      List<BroadcastConsumer> group, int kept) {
        count -= group.size() - kept;
        group.subList(kept, group.size()).clear();
        if (group.isEmpty()) {
            groups.remove();
        }
    }

    /** The last normalized next position, reused while consumers share it. */
    private final class Normalized {
        private long ledger = -1;
        private long entry = -1;
        private PositionImpl position;

        void reset() {
            position = null;
        }

        PositionImpl of(BroadcastConsumer bc) {
            if (position == null || bc.cursor.sending.nextLedger() != ledger || bc.cursor.sending.nextEntry() != entry) {
                ledger = bc.cursor.sending.nextLedger();
                entry = bc.cursor.sending.nextEntry();
                position = fanOut.storage.normalize(bc.cursor.sending.next());
            }
            return position;
        }
    }
}
