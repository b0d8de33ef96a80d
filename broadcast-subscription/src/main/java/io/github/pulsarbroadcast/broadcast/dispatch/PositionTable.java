package io.github.pulsarbroadcast.broadcast.dispatch;

import io.github.pulsarbroadcast.broadcast.cursor.VirtualCursor;
import java.util.Arrays;

/**
 * The positions of {@link RetainedCursors} in parallel arrays: each row holds a cursor, its connected consumer (null
 * while retained), when a retained one expires, and its {@link Row} (the name's slot, told its index when it is added
 * and when a removal moves it). The periodic scan walks every row once a second; in arrays it reads one object per
 * position (the cursor), where a hash map's entries cost three dependent loads each (entry, slot, cursor): at 100,000
 * consumers the difference is most of the scan (docs/benchmarks.md, experiment 11). Rows have no order; removing one
 * moves the last row into its place.
 *
 * <p>Threading: none of its own; {@link RetainedCursors} reads and writes it under its lock only.
 */
final class PositionTable {

    /** A row's owner, told where its row is: when it is added, and when a removal moves it. */
    interface Row {
        void movedTo(int index);
    }

    private VirtualCursor[] cursors = new VirtualCursor[16];
    private BroadcastConsumer[] attached = new BroadcastConsumer[16];
    private long[] expiresAt = new long[16];
    private Row[] rows = new Row[16];
    private int size;

    /** Adds a row and tells {@code row} its index. */
    void add(Row row, VirtualCursor cursor, BroadcastConsumer attachedTo, long expiresAtNanos) {
        if (size == cursors.length) {
            int n = size * 2;
            cursors = Arrays.copyOf(cursors, n);
            attached = Arrays.copyOf(attached, n);
            expiresAt = Arrays.copyOf(expiresAt, n);
            rows = Arrays.copyOf(rows, n);
        }
        cursors[size] = cursor;
        attached[size] = attachedTo;
        expiresAt[size] = expiresAtNanos;
        rows[size] = row;
        row.movedTo(size++);
    }

    /** Removes row {@code i}: the last row moves into its place (and is told) unless it was the last. */
    void remove(int i) {
        int last = --size;
        if (i != last) {
            cursors[i] = cursors[last];
            attached[i] = attached[last];
            expiresAt[i] = expiresAt[last];
            rows[i] = rows[last];
            rows[i].movedTo(i);
        }
        cursors[last] = null;
        attached[last] = null;
        rows[last] = null;
    }

    int size() {
        return size;
    }

    VirtualCursor cursor(int i) {
        return cursors[i];
    }

    void cursor(int i, VirtualCursor cursor) {
        cursors[i] = cursor;
    }

    /** The connected consumer of row {@code i}, or null while its position is retained. */
    BroadcastConsumer attached(int i) {
        return attached[i];
    }

    void attached(int i, BroadcastConsumer bc) {
        attached[i] = bc;
    }

    long expiresAt(int i) {
        return expiresAt[i];
    }

    void expiresAt(int i, long nanos) {
        expiresAt[i] = nanos;
    }

    Row row(int i) {
        return rows[i];
    }
}
