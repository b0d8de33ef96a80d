package io.github.pulsarbroadcast.broadcast.dispatch;

import io.github.pulsarbroadcast.broadcast.cursor.CursorRules;
import io.github.pulsarbroadcast.broadcast.cursor.VirtualCursor;
import io.github.pulsarbroadcast.broadcast.positions.SavedPosition;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntPredicate;
import java.util.function.Supplier;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.broker.service.BrokerServiceException.ConsumerBusyException;

/**
 * Every consumer position that holds the subscription's backlog: those of connected consumers and those retained
 * for a reconnect. A position is identified by its consumer name; it is created when a name first joins, stays
 * while the consumer is connected, is retained for {@code broadcastConsumerRetentionSeconds} after it leaves, and is
 * resumed by the next consumer that joins with that name. Consumers without a name keep a position only while
 * connected. Named positions are what {@link #save} hands to the {@link PositionSync} and {@link #restore} takes
 * back when the subscription loads on a broker.
 *
 * <p>Why one registry instead of a connected map and a parked map: the mark-delete scan must see every position at
 * every moment. With two maps, a consumer moving from one to the other (a join resuming, a leave retaining) was in
 * neither for an instant, and a scan at that instant could move the mark-delete past its acknowledged position. Here
 * a position stays in the one table through the whole move, and {@link #scan} runs under the same lock as attach and
 * detach, so a new position is either seen by the scan or created after it. A position created after the scan, but
 * before the mark-delete the scan computed is issued (outside the lock), starts at the old mark-delete or the tail:
 * the mark-delete then passes it only outside a recovery window, where such a join is an {@code Earliest} one, no
 * different from one made a moment later ({@link PeriodicSync} decides whether it may move before and after the
 * scan). The
 * positions themselves are rows of a {@link PositionTable} (arrays, which the scan walks); the maps only find a
 * name's or an anonymous consumer's row.
 *
 * <p>Threading: every method but {@link #attachedCount} (a volatile read) is synchronized on this object
 * ({@link #detach} runs the tasks waiting for a name after it lets go of the lock). The scan and a save's capture
 * each take the lock for one pass over the positions (microseconds per thousand); joins and leaves wait for them.
 */
final class RetainedCursors implements NameHandover.Releases {

    /** Builds the consumer for a position: {@code resumed} when the position was retained from an earlier one. */
    interface ConsumerFactory {
        BroadcastConsumer create(VirtualCursor cursor, boolean resumed);
    }

    /**
     * Thrown by {@link #attach} when the name is held by a connected consumer, {@link #holder}; the subscribe may
     * then wait for the name to be released ({@link NameHandover}).
     */
    static final class NameBusyException extends ConsumerBusyException {
        private static final long serialVersionUID = 1L;
        final transient BroadcastConsumer holder;

        NameBusyException(BroadcastConsumer holder) {
            super("Consumer name '" + holder.name + "' is already connected to this broadcast subscription:"
                    + " consumer names identify positions and must be unique within it");
            this.holder = holder;
        }
    }

    /**
     * A name's entry in {@link #byName} (or an anonymous consumer's in {@link #anonymous}): where its position is in
     * {@link #table}, and the tasks waiting for its connected consumer to leave (null when none, the usual case).
     */
    private static final class Slot implements PositionTable.Row {
        final String name;
        int index;
        List<Runnable> onRelease;

        Slot(String name) {
            this.name = name;
        }

        @Override
        public void movedTo(int index) {
            this.index = index;
        }
    }

    private final Map<String, Slot> byName = new HashMap<>();
    private final Map<BroadcastConsumer, Slot> anonymous = new IdentityHashMap<>();
    /** Every position, named and anonymous, in arrays: the scan reads one object (the cursor) per position. */
    private final PositionTable table = new PositionTable();
    /**
     * Connected consumers; written under the lock, volatile so that the dispatch thread's {@link #attachedCount} does
     * not wait for a capture ({@link #save}, on the plugin's position-save thread) or a scan.
     */
    private volatile int attached;

    /**
     * Attaches a consumer named {@code name}: to its retained position if there is one, else to a new one from
     * {@code fresh}.
     *
     * @throws NameBusyException when a consumer with that name is connected
     */
    synchronized BroadcastConsumer attach(String name, Supplier<VirtualCursor> fresh, ConsumerFactory factory)
            throws NameBusyException {
        if (name.isEmpty()) {
            Slot slot = new Slot(name);
            BroadcastConsumer bc = factory.create(fresh.get(), false);
            table.add(slot, bc.cursor, bc, 0);
            anonymous.put(bc, slot);
            attached++;
            return bc;
        }
        Slot slot = byName.get(name);
        if (slot != null && table.attached(slot.index) != null) {
            throw new NameBusyException(table.attached(slot.index));
        }
        boolean resumed = slot != null;
        if (slot == null) {
            slot = new Slot(name);
            table.add(slot, fresh.get(), null, 0);
            byName.put(name, slot);
        }
        BroadcastConsumer bc = factory.create(table.cursor(slot.index), resumed);
        table.attached(slot.index, bc);
        attached++;
        return bc;
    }

    /**
     * Detaches {@code bc}; its position is retained until {@code retainUntilNanos}, or dropped when {@code retain}
     * is false. Tasks waiting for its name ({@link #whenReleased}) then run on this thread, outside the lock.
     */
    void detach(BroadcastConsumer bc, boolean retain, long retainUntilNanos) {
        bc.markDetached(); // before its name can be taken: a consumer resuming it shares its cursor
        List<Runnable> waiting = detachLocked(bc, retain, retainUntilNanos);
        if (waiting != null) {
            waiting.forEach(Runnable::run);
        }
    }

    private synchronized List<Runnable> detachLocked(BroadcastConsumer bc, boolean retain, long retainUntilNanos) {
        if (bc.name.isEmpty()) {
            Slot slot = anonymous.remove(bc);
            if (slot != null) {
                table.remove(slot.index);
                attached--;
            }
            return null;
        }
        Slot slot = byName.get(bc.name);
        if (slot == null || table.attached(slot.index) != bc) {
            return null;
        }
        attached--;
        List<Runnable> waiting = slot.onRelease;
        slot.onRelease = null;
        if (retain) {
            table.attached(slot.index, null);
            table.expiresAt(slot.index, retainUntilNanos);
        } else {
            byName.remove(bc.name);
            table.remove(slot.index);
        }
        return waiting;
    }

    /**
     * Keeps {@code task} to run when {@code holder} leaves the name it holds; returns false, keeping nothing, when it
     * no longer holds it (the caller then goes on at once). A kept task runs once, on the thread that detaches
     * {@code holder}.
     */
    @Override
    public synchronized boolean whenReleased(BroadcastConsumer holder, Runnable task) {
        Slot slot = byName.get(holder.name);
        if (slot == null || table.attached(slot.index) != holder) {
            return false;
        }
        if (slot.onRelease == null) {
            slot.onRelease = new ArrayList<>(1);
        }
        slot.onRelease.add(task);
        return true;
    }

    /** How many subscribes wait for {@code name} to be released (for tests and diagnostics). */
    synchronized int waitingFor(String name) {
        Slot slot = byName.get(name);
        return slot == null || slot.onRelease == null ? 0 : slot.onRelease.size();
    }

    @Override
    public synchronized void forgetRelease(BroadcastConsumer holder, Runnable task) {
        Slot slot = byName.get(holder.name);
        if (slot != null && table.attached(slot.index) == holder && slot.onRelease != null) {
            slot.onRelease.remove(task);
        }
    }

    /**
     * {@link #scan(PositionImpl, long, PositionScan)} from the position {@code start} gives, asked under the lock: a
     * close or reset then happens wholly before the scan (which {@code start} sees) or wholly after it, never between
     * the check and the pass. False, with nothing done, when {@code start} gives no position.
     */
    synchronized boolean scan(PositionScan.Start start, long nowNanos, PositionScan out) {
        PositionImpl markDeleted = start.markDeletedOrNull();
        out.markDeleted = markDeleted;
        if (markDeleted == null) {
            return false;
        }
        scan(markDeleted, nowNanos, out);
        return true;
    }

    /**
     * One pass over every position: drops retained ones that expired, moves each one below {@code markDeleted} up to
     * it (connected consumers so moved are listed), and finds the lowest acknowledged position of all and the
     * lowest acknowledged and next positions of the connected ones.
     */
    synchronized void scan(PositionImpl markDeleted, long nowNanos, PositionScan out) {
        out.lowestAcknowledged = null;
        out.lowestConnectedAcknowledged = null;
        out.lowestNext = null;
        out.movedForward.clear();
        out.movedAny = false;
        out.movedRetained = 0;
        out.expired = 0;
        for (int i = 0; i < table.size(); i++) {
            BroadcastConsumer attachedTo = table.attached(i);
            if (attachedTo == null && table.expiresAt(i) - nowNanos < 0) {
                removeRetained(i--); // the last row moved here: visit it next
                out.expired++;
                continue;
            }
            visit(table.cursor(i), attachedTo, markDeleted, out);
        }
    }

    private static void visit(VirtualCursor cursor, BroadcastConsumer attachedTo, PositionImpl markDeleted,
                              PositionScan out) {
        if (cursor.skipTo(markDeleted)) {
            out.movedAny = true;
            if (attachedTo != null) {
                out.movedForward.add(attachedTo);
            } else {
                out.movedRetained++;
            }
        }
        out.lowestAcknowledged = cursor.lowerAcknowledged(out.lowestAcknowledged);
        if (attachedTo != null) {
            out.lowestNext = cursor.sending.lowerNext(out.lowestNext);
            out.lowestConnectedAcknowledged = cursor.lowerAcknowledged(out.lowestConnectedAcknowledged);
        }
        if (out.summaries != null) {
            out.summaries.add(cursor.acknowledgedAs(out.lagOf), attachedTo);
        }
    }

    private static PositionImpl max(PositionImpl a, PositionImpl b) {
        return a.compareTo(b) >= 0 ? a : b;
    }

    /**
     * Every named position as saved: a connected consumer's with retention 0, a retained one's with the wall-clock
     * time it expires. At most {@code rangeBudget} individually acknowledged ranges are saved in all: a position
     * whose ranges no longer fit is saved without them (its consumer may get those messages again after the next
     * load: duplicates, never loss), so that a snapshot stays bounded however many consumers ack out of order (each
     * holds at most {@code broadcastMaxAckRangesPerConsumer}); ranges past the budget are not even copied. Which
     * positions keep their ranges is arbitrary. {@code dropped[0]}, when given, receives how many positions lost
     * theirs.
     */
    synchronized List<SavedPosition> save(long nowNanos, long wallMillis, int rangeBudget, int[] dropped) {
        List<SavedPosition> out = new ArrayList<>(byName.size());
        int budget = rangeBudget;
        int droppedCount = 0;
        boolean[] cut = {false};
        for (int i = 0; i < table.size(); i++) {
            String name = ((Slot) table.row(i)).name;
            if (name.isEmpty()) {
                continue;
            }
            // Rounded up to the second: consumers that left together (every one of them when the topic moves)
            // then share one group of the snapshot instead of one each (SnapshotCodec), 3 bytes a consumer, not 36.
            long until = table.attached(i) != null ? 0
                    : ceilSecond(wallMillis + Math.max(1, (table.expiresAt(i) - nowNanos) / 1_000_000));
            SavedPosition p = table.cursor(i).save((acked, ranges) -> {
                cut[0] = ranges == null;
                return new SavedPosition(name, acked.getLedgerId(), acked.getEntryId(), ranges, until);
            }, budget);
            droppedCount += cut[0] ? 1 : 0;
            budget -= p.ranges().length / 3;
            out.add(p);
        }
        if (dropped != null) {
            dropped[0] = droppedCount;
        }
        return out;
    }

    private static long ceilSecond(long millis) {
        return (millis + 999) / 1_000 * 1_000;
    }

    /**
     * Takes back saved positions as retained ones (before any consumer joins): a position saved while its consumer
     * was connected is retained for {@code retentionNanos} from now, a retained one until it was due to expire but at
     * least {@code minNanos} from now (its consumer may have reconnected after the last save, and must get the time
     * to come back after the move).
     *
     * A saved position below {@code markDeleted} starts at it: the save is older than the mark-delete (the consumer
     * acknowledged more after it, or its retention ran out and the mark-delete moved on before the broker crashed),
     * and nothing at or below the mark-delete can be read again for it.
     *
     * @return how many saved positions had expired already and were dropped
     */
    synchronized int restore(List<SavedPosition> saved, long nowNanos, long wallMillis, long retentionNanos,
                             long minNanos, PositionImpl markDeleted, CursorRules rules) {
        int expired = 0;
        for (SavedPosition p : saved) {
            long expiresAt = p.retainedUntilMillis() == 0 ? nowNanos + retentionNanos
                    : nowNanos + Math.max(minNanos, (p.retainedUntilMillis() - wallMillis) * 1_000_000);
            if (p.name().isEmpty() || expiresAt - nowNanos <= 0 || byName.containsKey(p.name())) {
                expired += p.name().isEmpty() || byName.containsKey(p.name()) ? 0 : 1;
                continue;
            }
            Slot slot = new Slot(p.name());
            table.add(slot, VirtualCursor.restored(max(PositionImpl.get(p.ackedLedger(),
                    p.ackedEntry()), markDeleted), p.ranges(), rules), null, expiresAt);
            byName.put(p.name(), slot);
        }
        return expired;
    }

    /**
     * After a reset-cursor: every retained position starts again at {@code at} (the reset position), retained until
     * {@code expiresAtNanos}, so that the consumers the reset disconnected resume there by name; those that had
     * expired by {@code nowNanos} are dropped.
     */
    synchronized void restartAll(PositionImpl at, CursorRules rules, long nowNanos, long expiresAtNanos) {
        removeRetainedIf(i -> table.expiresAt(i) - nowNanos < 0);
        for (int i = 0; i < table.size(); i++) {
            if (table.attached(i) == null) {
                table.cursor(i, new VirtualCursor(at, rules));
                table.expiresAt(i, expiresAtNanos);
            }
        }
    }

    /** Drops every retained position (reset-cursor, close); connected consumers keep theirs. */
    synchronized void dropRetained() {
        removeRetainedIf(i -> true);
    }

    /** Removes every retained position (anonymous ones are never retained) whose row passes {@code test}. */
    private void removeRetainedIf(IntPredicate test) {
        for (int i = 0; i < table.size(); i++) {
            if (table.attached(i) == null && test.test(i)) {
                removeRetained(i--); // the last row moved here: test it next
            }
        }
    }

    /** Removes row {@code i}, a retained (so named) position, and its name; the last row moves into its place. */
    private void removeRetained(int i) {
        Slot gone = (Slot) table.row(i);
        byName.remove(gone.name, gone);
        table.remove(i);
    }

    /** Every position's lag in entries (connected and retained), in no particular order. */
    synchronized long[] lags(EntryOffsets offsets) {
        long[] out = new long[table.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = offsets.lag(table.cursor(i).acknowledged());
        }
        return out;
    }

    /** The connected consumers, copied under the lock. */
    synchronized List<BroadcastConsumer> attachedConsumers() {
        List<BroadcastConsumer> out = new ArrayList<>(attached);
        for (int i = 0; i < table.size(); i++) {
            if (table.attached(i) != null) {
                out.add(table.attached(i));
            }
        }
        return out;
    }

    /** Connected consumers; any thread, without the lock. */
    int attachedCount() {
        return attached;
    }

    /** Positions retained for consumers that are not connected. */
    synchronized int retainedCount() {
        return byName.size() - (attached - anonymous.size());
    }
}
