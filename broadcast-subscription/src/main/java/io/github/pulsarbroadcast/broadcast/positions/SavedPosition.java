package io.github.pulsarbroadcast.broadcast.positions;

import java.util.Arrays;
import java.util.Objects;

/**
 * One consumer's persisted position: its name, its cumulative acknowledged position, the positions it acknowledged
 * individually above it (as ranges within one ledger each: {@code ledger, firstEntry, endEntry (exclusive)}
 * triples), and until when a disconnected consumer's position is retained (wall-clock milliseconds; {@code 0} while
 * the consumer is connected).
 *
 * <p>Threading: immutable.
 */
public final class SavedPosition {

    private static final long[] NO_RANGES = new long[0];

    private final String name;
    private final long ackedLedger;
    private final long ackedEntry;
    private final long[] ranges;
    private final long retainedUntilMillis;

    public SavedPosition(String name, long ackedLedger, long ackedEntry, long[] ranges, long retainedUntilMillis) {
        if (ranges != null && ranges.length % 3 != 0) {
            throw new IllegalArgumentException("ranges are (ledger, first, end) triples, length " + ranges.length);
        }
        this.name = Objects.requireNonNull(name);
        this.ackedLedger = ackedLedger;
        this.ackedEntry = ackedEntry;
        this.ranges = ranges == null || ranges.length == 0 ? NO_RANGES : ranges;
        this.retainedUntilMillis = retainedUntilMillis;
    }

    public String name() {
        return name;
    }

    public long ackedLedger() {
        return ackedLedger;
    }

    public long ackedEntry() {
        return ackedEntry;
    }

    /** Individually acknowledged ranges as {@code ledger, firstEntry, endEntry} triples; do not modify. */
    public long[] ranges() {
        return ranges;
    }

    /** Wall-clock milliseconds until which the position of a disconnected consumer is kept; 0 when connected. */
    public long retainedUntilMillis() {
        return retainedUntilMillis;
    }

    /** Whether two positions are the same apart from the name (the codec stores such positions once). */
    boolean samePlace(SavedPosition o) {
        return ackedLedger == o.ackedLedger && ackedEntry == o.ackedEntry
                && retainedUntilMillis == o.retainedUntilMillis && Arrays.equals(ranges, o.ranges);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SavedPosition && name.equals(((SavedPosition) o).name) && samePlace((SavedPosition) o);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, ackedLedger, ackedEntry, retainedUntilMillis, Arrays.hashCode(ranges));
    }

    @Override
    public String toString() {
        return name + "@" + ackedLedger + ":" + ackedEntry + (ranges.length > 0 ? "+" + Arrays.toString(ranges) : "")
                + (retainedUntilMillis > 0 ? " until " + retainedUntilMillis : "");
    }
}
