package io.github.pulsarbroadcast.broadcast.dispatch;

import java.util.ArrayList;
import java.util.List;
import org.apache.bookkeeper.mledger.Entry;
import org.apache.bookkeeper.mledger.impl.PositionImpl;

/**
 * The entries of one storage read, in position order, holding one reference to each until {@link #release}.
 *
 * <p>Threading: the dispatch thread only.
 */
final class EntryBatch implements EntrySource {

    private final List<WindowEntry> entries;
    private final PositionImpl after;

    private EntryBatch(List<WindowEntry> entries, PositionImpl after) {
        this.entries = entries;
        this.after = after;
    }

    /**
     * Takes over the read's entries; {@code after} is the position following the last one; {@code storage} tells
     * which transactions were aborted ({@link WindowEntry#withheld}).
     */
    static EntryBatch of(List<Entry> read, PositionImpl after, SubscriptionStorage storage) {
        List<WindowEntry> entries = new ArrayList<>(read.size());
        try {
            for (Entry entry : read) {
                entries.add(WindowEntry.of(entry, storage));
            }
        } catch (RuntimeException | Error e) {
            // Nothing may stay referenced: the entries taken over so far, and those not reached.
            entries.forEach(WindowEntry::release);
            read.subList(entries.size() + 1, read.size()).forEach(Entry::release);
            throw e;
        }
        return new EntryBatch(entries, after);
    }

    /**
     * {@link #of}, the read ending at {@code last} (the position after it asked of {@code storage}); on failure the
     * entries are released.
     */
    static EntryBatch endingAt(List<Entry> read, PositionImpl last, SubscriptionStorage storage) {
        PositionImpl after;
        try {
            after = storage.next(last);
        } catch (RuntimeException | Error e) {
            read.forEach(Entry::release);
            throw e;
        }
        return of(read, after, storage); // releases them if it fails
    }

    @Override
    public int size() {
        return entries.size();
    }

    @Override
    public WindowEntry get(int i) {
        return entries.get(i);
    }

    @Override
    public PositionImpl after() {
        return after;
    }

    PositionImpl first() {
        return entries.get(0).position;
    }

    void release() {
        for (WindowEntry e : entries) {
            e.release();
        }
        entries.clear();
    }
}
