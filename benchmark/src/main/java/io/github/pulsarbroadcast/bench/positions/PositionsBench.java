package io.github.pulsarbroadcast.bench.positions;

import io.github.pulsarbroadcast.standalone.BuildVersion;
import io.github.pulsarbroadcast.broadcast.cursor.CursorRules;
import io.github.pulsarbroadcast.broadcast.cursor.VirtualCursor;
import io.github.pulsarbroadcast.broadcast.positions.MetadataPositionStore;
import io.github.pulsarbroadcast.broadcast.positions.PositionStore;
import io.github.pulsarbroadcast.broadcast.positions.SavedPosition;
import io.github.pulsarbroadcast.broadcast.positions.SnapshotCodec;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.metadata.api.MetadataStoreConfig;
import org.apache.pulsar.metadata.api.extended.MetadataStoreExtended;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Measures what saving and restoring N consumers' positions costs, with the plugin's own classes: building the
 * snapshot from N virtual cursors ({@code VirtualCursor.save}, as {@code RetainedCursors.save} does) and encoding
 * it; writing it to and reading it from a metadata store ({@code MetadataPositionStore}: Pulsar's in-memory store by
 * default, ZooKeeper with {@code --metadata-url zk:127.0.0.1:2181}); decoding it and restoring N virtual cursors
 * ({@code VirtualCursor.restored}, as {@code RetainedCursors.restore} does). Each step is repeated and its median wall
 * time and thread CPU time printed.
 *
 * <p>Threading: single-threaded (the metadata store's own threads answer).
 */
@Command(name = "pulsar-broadcast bench-positions", mixinStandardHelpOptions = true,
        versionProvider = BuildVersion.class,
        description = "Cost of saving and restoring broadcast consumer positions.")
public final class PositionsBench implements Callable<Integer> {

    @Option(names = "--consumers", description = "consumers (default: ${DEFAULT-VALUE})")
    int consumers = 100_000;

    @Option(names = "--behind-percent", description = "consumers not at the tail (default: ${DEFAULT-VALUE})")
    double behindPercent = 1;

    @Option(names = "--repeat", description = "measured repetitions per step (default: ${DEFAULT-VALUE})")
    int repeat = 11;

    @Option(names = "--metadata-url", description = "metadata store (default: ${DEFAULT-VALUE})")
    String metadataUrl = "memory:local";

    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    private final CursorRules rules = new CursorRules(p -> PositionImpl.get(p.getLedgerId(), p.getEntryId() + 1),
            1000);

    public static void main(String[] args) {
        System.exit(new CommandLine(new PositionsBench()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        List<VirtualCursor> cursors = new ArrayList<>();
        List<String> names = new ArrayList<>();
        int everyBehind = behindPercent <= 0 ? Integer.MAX_VALUE : (int) Math.max(1, Math.round(100 / behindPercent));
        for (int i = 0; i < consumers; i++) {
            names.add(String.format("vehicle-%06d", i));
            cursors.add(new VirtualCursor(PositionImpl.get(7, i % everyBehind == 0 ? 900 + i % 100 : 999), rules));
        }
        List<SavedPosition> saved = snapshot(names, cursors);
        byte[] bytes = SnapshotCodec.encode(saved);
        System.out.printf("consumers %,d (%.1f%% behind the tail): snapshot %,d bytes, %.2f bytes per consumer%n",
                consumers, behindPercent, bytes.length, bytes.length / (double) consumers);
        measure("build snapshot from the cursors + encode", () -> SnapshotCodec.encode(snapshot(names, cursors)));
        measure("decode", () -> SnapshotCodec.decode(bytes));
        measure("decode + restore every cursor", () -> restore(SnapshotCodec.decode(bytes)));
        try (MetadataStoreExtended store = MetadataStoreExtended.create(metadataUrl,
                MetadataStoreConfig.builder().build())) {
            MetadataPositionStore positions = new MetadataPositionStore(store, "bench/ns/persistent/topic", "fleet",
                    "[bench]", MetadataPositionStore.DEFAULT_CHUNK_BYTES);
            positions.load().get();
            measure("save (encode + metadata-store write)", () -> positions.save(saved, null, false).get());
            measure("load (metadata-store read + take-over write + decode) + restore", () -> {
                MetadataPositionStore reader = new MetadataPositionStore(store, "bench/ns/persistent/topic", "fleet",
                        "[bench]", MetadataPositionStore.DEFAULT_CHUNK_BYTES);
                PositionStore.Loaded loaded = reader.load().get();
                return restore(loaded.positions);
            });
            positions.delete().get();
        }
        return 0;
    }

    private static List<SavedPosition> snapshot(List<String> names, List<VirtualCursor> cursors) {
        List<SavedPosition> out = new ArrayList<>(cursors.size());
        for (int i = 0; i < cursors.size(); i++) {
            String name = names.get(i);
            out.add(cursors.get(i).save((acked, ranges) -> new SavedPosition(name, acked.getLedgerId(),
                    acked.getEntryId(), ranges, 0)));
        }
        return out;
    }

    private int restore(List<SavedPosition> positions) {
        int n = 0;
        for (SavedPosition p : positions) {
            n += VirtualCursor.restored(PositionImpl.get(p.ackedLedger(), p.ackedEntry()), p.ranges(), rules)
                    .sending.permits() == 0 ? 1 : 0;
        }
        return n;
    }

    /** Runs {@code step} a few times to warm up, then {@link #repeat} times; prints the median wall and CPU time. */
    private void measure(String what, Callable<?> step) throws Exception {
        for (int i = 0; i < 3; i++) {
            step.call();
        }
        long[] wall = new long[repeat];
        long[] cpu = new long[repeat];
        for (int i = 0; i < repeat; i++) {
            long c0 = threads.getCurrentThreadCpuTime();
            long w0 = System.nanoTime();
            step.call();
            wall[i] = System.nanoTime() - w0;
            cpu[i] = threads.getCurrentThreadCpuTime() - c0;
        }
        Arrays.sort(wall);
        Arrays.sort(cpu);
        System.out.printf("%-66s median wall %8.2f ms, this thread's CPU %8.2f ms (%.0f ns per consumer)%n", what,
                wall[repeat / 2] / 1e6, cpu[repeat / 2] / 1e6, cpu[repeat / 2] / (double) consumers);
    }
}
