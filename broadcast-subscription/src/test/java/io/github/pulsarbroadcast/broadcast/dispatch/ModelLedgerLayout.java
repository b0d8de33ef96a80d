package io.github.pulsarbroadcast.broadcast.dispatch;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.bookkeeper.mledger.impl.PositionImpl;

/**
 * The ledgers of {@link ModelLedger} and how many entries each holds, with the position arithmetic the managed
 * ledger does over them: appends roll over to a new ledger every few entries (an empty ledger removed leaves a gap in
 * the ids), the next valid position, the last confirmed entry, where a read starts.
 *
 * <p>Threading: single-threaded (the model test's thread).
 */
final class ModelLedgerLayout {

    /** Ledger id to its entry count; the last ledger is the open one. */
    private final TreeMap<Long, Integer> ledgers = new TreeMap<>();
    private final int rollEvery;

    ModelLedgerLayout(long firstLedger, int rollEvery) {
        this.rollEvery = rollEvery;
        ledgers.put(firstLedger, 0);
    }

    /** Appends one entry (rolling over first when the open ledger is full; {@code skipLedger} leaves a gap). */
    PositionImpl append(boolean skipLedger) {
        long current = ledgers.lastKey();
        if (ledgers.get(current) >= rollEvery) {
            current = current + (skipLedger ? 2 : 1);
            ledgers.put(current, 0);
        }
        int n = ledgers.get(current);
        ledgers.put(current, n + 1);
        return PositionImpl.get(current, n);
    }

    /** Every position in (from, to], in order. */
    List<PositionImpl> between(PositionImpl from, PositionImpl to) {
        List<PositionImpl> out = new ArrayList<>();
        for (PositionImpl p = next(from); p.compareTo(to) <= 0 && exists(p); p = next(p)) {
            out.add(p);
        }
        return out;
    }

    boolean exists(PositionImpl p) {
        Integer n = ledgers.get(p.getLedgerId());
        return n != null && p.getEntryId() >= 0 && p.getEntryId() < n;
    }

    PositionImpl lastConfirmed() {
        for (Map.Entry<Long, Integer> e : ledgers.descendingMap().entrySet()) {
            if (e.getValue() > 0) {
                return PositionImpl.get(e.getKey(), e.getValue() - 1);
            }
        }
        return PositionImpl.get(ledgers.firstKey(), -1);
    }

    private boolean isValid(PositionImpl p) {
        PositionImpl last = lastConfirmed();
        if (p.getEntryId() < 0 || p.getLedgerId() > last.getLedgerId()) {
            return false;
        }
        if (p.getLedgerId() == last.getLedgerId()) {
            return p.getEntryId() <= last.getEntryId() + 1;
        }
        Integer n = ledgers.get(p.getLedgerId());
        return n == null ? false : p.getEntryId() < n;
    }

    EntryOffsets entryOffsets() {
        TreeMap<Long, Long> entries = new TreeMap<>();
        ledgers.forEach((id, n) -> entries.put(id, (long) n));
        return EntryOffsets.of(entries, lastConfirmed());
    }

    PositionImpl next(PositionImpl position) {
        PositionImpl p = position.getNext();
        while (!isValid(p)) {
            Long nextLedger = ledgers.ceilingKey(p.getLedgerId() + 1);
            if (nextLedger == null) {
                return lastConfirmed().getNext();
            }
            p = PositionImpl.get(nextLedger, 0);
        }
        return p;
    }

    /** The entry before {@code position} in the ledgers still here, or {@code (its ledger, -1)}. */
    PositionImpl previous(PositionImpl position) {
        if (position.getEntryId() > 0) {
            return PositionImpl.get(position.getLedgerId(), position.getEntryId() - 1);
        }
        for (Map.Entry<Long, Integer> e : ledgers.headMap(position.getLedgerId(), false).descendingMap().entrySet()) {
            if (e.getValue() > 0) {
                return PositionImpl.get(e.getKey(), e.getValue() - 1);
            }
        }
        return PositionImpl.get(position.getLedgerId(), -1);
    }

    PositionImpl normalize(PositionImpl position) {
        if (isValid(position)) {
            return position;
        }
        PositionImpl n = next(position);
        return n.compareTo(position) > 0 ? n : position;
    }

    /**
     * Where a tail read from the read position {@code start} begins: at the first entry of the next ledger when
     * {@code start}'s ledger is gone, at the next entry when {@code start} names none at or before the last confirmed
     * one, else at {@code start}.
     */
    PositionImpl tailReadStart(PositionImpl start) {
        Long ledger = ledgers.ceilingKey(start.getLedgerId());
        if (ledger != null && ledger != start.getLedgerId()) {
            return PositionImpl.get(ledger, 0);
        } else if (!exists(start) && start.compareTo(lastConfirmed()) <= 0) {
            return next(start);
        }
        return start;
    }

    /**
     * A new, empty ledger after the last (a topic load, which first drops the empty ledgers, as
     * {@code ManagedLedgerImpl.initialize}; or a time-based rollover, with {@code dropEmpty} false): the last
     * confirmed entry stays in the last ledger with entries, and the next append goes to the new one.
     */
    void openNewLedger(boolean dropEmpty) {
        long id = ledgers.lastKey() + 1;
        if (dropEmpty) {
            ledgers.values().removeIf(n -> n == 0);
        }
        ledgers.put(id, 0);
    }

    /** The ledger a read at {@code p} opens (its own, or the next one when it is gone); null past the last. */
    Long ledgerReadAt(PositionImpl p) {
        return ledgers.ceilingKey(p.getLedgerId());
    }

    /**
     * As {@code ManagedLedgerImpl.asyncReadEntries}: a read with entries to read (the read position at or before the
     * last confirmed entry) opens the ledger of its read position unless it is the one being written, even where the
     * position is past that ledger's end: whether that ledger is one of {@code lost}, which fails the read before any
     * entry is looked at.
     */
    boolean readOpensOneOf(Set<Long> lost, PositionImpl readPosition) {
        Long opened = ledgerReadAt(readPosition);
        return opened != null && !opened.equals(ledgers.lastKey()) && lost.contains(opened)
                && readPosition.compareTo(lastConfirmed()) <= 0;
    }

    PositionImpl firstOfNextLedger(long ledgerId) {
        Long next = ledgers.ceilingKey(ledgerId + 1);
        return next == null ? null : PositionImpl.get(next, 0);
    }
}
