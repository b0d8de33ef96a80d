package io.github.pulsarbroadcast.broadcast.dispatch;

import io.github.pulsarbroadcast.broadcast.WindowBudget;
import io.github.pulsarbroadcast.broadcast.cursor.VirtualCursor;
import org.apache.bookkeeper.mledger.impl.PositionImpl;

/**
 * The most recent entries read at the tail of the topic, in order, so that consumers a little behind (a flow that
 * came late, a short pause) are served from memory and the entry is read from storage once. Bounded by a count and
 * a byte size; what falls out of it is read again, through the broker's entry cache, by the consumers that need it.
 *
 * <p>Threading: not thread-safe; owned by the subscription's dispatch thread, except {@link #size} and {@link
 * #bytes}, which are single-writer (the dispatch thread) and volatile for metrics. The window holds one reference to
 * each entry's data and releases it on eviction.
 */
final class EntryWindow implements EntrySource {

    private final int maxEntries;
    private final long maxBytes;
    /** The broker-wide bound shared with every other window. */
    private final WindowBudget budget;
    /** Ring buffer: entries[(head + i) % capacity] for i in [0, size). */
    private WindowEntry[] entries;
    private int head;
    private volatile int size;
    private volatile long bytes;
    /** The position after the newest entry: where the next tail read starts. */
    private PositionImpl after;

    EntryWindow(int maxEntries, long maxBytes) {
        this(maxEntries, maxBytes, WindowBudget.unlimited());
    }

    EntryWindow(int maxEntries, long maxBytes, WindowBudget budget) {
        this.maxEntries = maxEntries;
        this.maxBytes = maxBytes;
        this.budget = budget;
        this.entries = new WindowEntry[Math.min(16, Math.max(1, maxEntries))];
    }

    @Override
    public int size() {
        return size;
    }

    /** Bytes of the entries held; any thread. */
    long bytes() {
        return bytes;
    }

    @Override
    public PositionImpl after() {
        return after;
    }

    @Override
    public WindowEntry get(int i) {
        return entries[(head + i) % entries.length];
    }

    /** The oldest position held, or null. */
    PositionImpl firstPosition() {
        return size == 0 ? null : get(0).position;
    }

    /** Appends the batch's entries (each retained for the window) and evicts the oldest while over the bounds. */
    void append(EntryBatch batch) {
        for (int i = 0; i < batch.size(); i++) {
            WindowEntry e = batch.get(i);
            e.retain();
            append(e);
        }
        after = batch.after();
    }

    private void append(WindowEntry entry) {
        while (size > 0 && !budget.tryReserve(entry.payloadSize())) {
            evictFirst(); // the broker-wide budget is spent: make room from our own oldest entries first
        }
        if (size == 0 && !budget.tryReserve(entry.payloadSize())) {
            // Other windows hold the whole budget: keep nothing (consumers behind read through the entry cache).
            entry.release();
            after = null;
            return;
        }
        if (size == entries.length) {
            grow();
        }
        entries[(head + size) % entries.length] = entry;
        size++;
        bytes += entry.payloadSize();
        while (size > 1 && (size > maxEntries || bytes > maxBytes)) {
            evictFirst();
        }
    }

    /** Whether a consumer whose next position is {@code position} can be served from the window. */
    boolean covers(PositionImpl position) {
        return size > 0 && position.compareTo(get(0).position) >= 0 && position.compareTo(after) < 0;
    }

    /** {@link #covers} for a cursor's next position (nothing allocated). */
    boolean coversNextOf(VirtualCursor cursor) {
        return size > 0 && cursor.sending.compareNextTo(get(0).position) >= 0 && cursor.sending.compareNextTo(after) < 0;
    }

    /** Releases entries older than {@code position}: no consumer needs them any more. */
    void evictBefore(PositionImpl position) {
        while (size > 0 && get(0).position.compareTo(position) < 0) {
            evictFirst();
        }
    }

    /** Releases everything. */
    void clear() {
        while (size > 0) {
            evictFirst();
        }
        after = null;
    }

    private void evictFirst() {
        WindowEntry first = entries[head];
        entries[head] = null;
        head = (head + 1) % entries.length;
        size--;
        bytes -= first.payloadSize();
        budget.release(first.payloadSize());
        first.release();
    }

    private void grow() {
        WindowEntry[] bigger = new WindowEntry[entries.length * 2];
        for (int i = 0; i < size; i++) {
            bigger[i] = get(i);
        }
        entries = bigger;
        head = 0;
    }

    @Override
    public String toString() {
        return size == 0 ? "[]" : "[" + get(0).position + " .. " + get(size - 1).position + " (" + size
                + " entries), after " + after + "]";
    }
}
