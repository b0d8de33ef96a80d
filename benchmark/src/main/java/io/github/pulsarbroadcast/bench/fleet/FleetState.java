package io.github.pulsarbroadcast.bench.fleet;

import io.github.pulsarbroadcast.bench.core.ConsumerTracker;
import io.github.pulsarbroadcast.bench.core.Deliveries;
import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;

/**
 * The file a fleet process writes when asked to collect, and the benchmark JVM reads: every consumer's tracker,
 * the latency histograms, the per-message fan-out, the warm-up receipts in the CPU window and the fleet's own
 * counters. The benchmark JVM merges it into its
 * own {@link Deliveries}, so that the report is made from the same objects as with the stock client.
 *
 * <p>Threading: a value object filled by {@link #read} on the reading thread, then read only.
 */
public final class FleetState {

    private static final int MAGIC = 0x464c4554;
    private static final int VERSION = 2;

    /** Consumers that connected again after a broker close or a lost connection. */
    public long reconnects;
    /** Entries that could not be read (checksum, compression, malformed batch). */
    public long entryErrors;
    public long connectionsOpened;
    /** The first error the process noted, or null. */
    public String firstError;

    static void write(DataOutput out, ConsumerTracker[] trackers, Deliveries deliveries, long reconnects,
            long entryErrors, long connectionsOpened, String firstError) throws IOException {
        out.writeInt(MAGIC);
        out.writeInt(VERSION);
        out.writeInt(trackers.length);
        for (ConsumerTracker t : trackers) {
            t.writeTo(out);
        }
        deliveries.latency().writeTo(out);
        deliveries.fanOut().writeTo(out);
        out.writeLong(deliveries.warmupReceiptsInWindow());
        out.writeLong(reconnects);
        out.writeLong(entryErrors);
        out.writeLong(connectionsOpened);
        out.writeUTF(firstError == null ? "" : firstError.length() > 2_000 ? firstError.substring(0, 2_000)
                : firstError);
    }

    /**
     * Reads one file into {@code into}: each tracker replaces the state of the tracker with its index, the
     * histograms and fan-out are added (reset {@code into} first when merging a fresh set of files).
     */
    public static FleetState read(DataInput in, Deliveries into) throws IOException {
        if (in.readInt() != MAGIC || in.readInt() != VERSION) {
            throw new IOException("not a fleet state file of this version");
        }
        ConsumerTracker[] trackers = into.trackers();
        int n = in.readInt();
        for (int i = 0; i < n; i++) {
            int index = in.readInt();
            if (index < 0 || index >= trackers.length) {
                throw new IOException("consumer index " + index + " out of range");
            }
            trackers[index].readFrom(in);
        }
        into.latency().mergeFrom(in);
        into.fanOut().mergeFrom(in);
        into.addWarmupReceiptsInWindow(in.readLong());
        FleetState s = new FleetState();
        s.reconnects = in.readLong();
        s.entryErrors = in.readLong();
        s.connectionsOpened = in.readLong();
        String error = in.readUTF();
        s.firstError = error.isEmpty() ? null : error;
        return s;
    }
}
