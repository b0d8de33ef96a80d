package io.github.pulsarbroadcast.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A JVM's CPU time by group of threads, from Linux's {@code /proc/<pid>/task/<tid>/stat}: each thread's name (the
 * first 15 characters of the Java thread name, as Linux keeps it) and its user + system time, added into the group
 * of the first {@link #GROUPS} entry one of whose prefixes the name starts with ({@link #OTHER} when none does).
 *
 * <p>What the groups are for: the broker JVM of a benchmark run holds ZooKeeper, the bookie and stock Pulsar's
 * periodic work beside the broker's event loops and the plugin's threads, and the JIT compiles for minutes after a
 * fresh start; one CPU figure for the whole process cannot say which part a change moved or what a ratio between two
 * builds is made of. The floor server's event loops ({@code floor-io}) count as event loops, so that the two compare.
 *
 * <p>{@link Totals} keeps each group's figure a running total of what its threads used between readings (each
 * thread's growth since the reading before, by thread id), so that a thread that ends does not take its earlier time
 * out of its group: what it used after the last reading that saw it is lost to the groups (Linux keeps it in the
 * process's total only), and the reader compares the groups' sum with the process's own CPU over the same span
 * ({@link RunMeter}).
 *
 * <p>Threading: the static methods are stateless, any thread; a {@link Totals} is confined to its caller's
 * synchronization (its fields are unguarded).
 */
final class ThreadCpu {

    /** One group: its name in reports and the thread-name prefixes it takes. Threading: immutable. */
    static final class Group {
        final String name;
        final List<String> prefixes;

        Group(String name, String... prefixes) {
            this.name = name;
            this.prefixes = List.of(prefixes);
        }
    }

    /** In the order they are matched and reported. */
    static final List<Group> GROUPS = List.of(
            new Group("event loops", "pulsar-io", "floor-io", "pulsar-acceptor"),
            new Group("broadcast dispatch", "broadcast-dispa"),
            new Group("broadcast, other", "broadcast-"),
            new Group("JIT compilers", "C1 CompilerThre", "C2 CompilerThre", "Sweeper thread"),
            new Group("GC and VM", "GC Thread", "G1 ", "VM ", "Service Thread", "Finalizer", "Reference Handl",
                    "Signal Dispatch", "Common-Cleaner"),
            new Group("stock stats and metrics", "pulsar-stats", "prometheus-stat"),
            new Group("storage and metadata", "bookie", "Bookie", "BookKeeper", "bookkeeper", "metadata-store",
                    "SyncThread", "main-SendThread", "main-EventThrea", "NIOServerCxn", "NIOWorkerThread",
                    "ProcessThread", "RequestThrottl", "GarbageCollecto", "ForceWrite", "LedgerDirsMonit",
                    "SessionTracker", "zk-"),
            new Group("broker, other", "pulsar", "embedded-pulsar", "broker-"));

    /** The index of the group of threads no prefix matches (one past the last of {@link #GROUPS}). */
    static final int OTHER = GROUPS.size();
    /** The report name of {@link #OTHER}. */
    static final String OTHER_NAME = "other threads";

    private ThreadCpu() {
    }

    /** The group index of a thread named {@code name} (as {@code /proc} gives it). */
    static int classify(String name) {
        for (int g = 0; g < GROUPS.size(); g++) {
            for (String prefix : GROUPS.get(g).prefixes) {
                if (name.startsWith(prefix)) {
                    return g;
                }
            }
        }
        return OTHER;
    }

    /** The name of group {@code g} (0 to {@link #OTHER}). */
    static String name(int g) {
        return g == OTHER ? OTHER_NAME : GROUPS.get(g).name;
    }

    /**
     * Reads every live thread of {@code pid} into {@code totals}; false, with the totals of the threads read so far
     * updated, when the process cannot be read. A thread that ends while it is read is skipped.
     */
    static boolean read(long pid, Totals totals) {
        Path tasks = Path.of("/proc", Long.toString(pid), "task");
        try (DirectoryStream<Path> threads = Files.newDirectoryStream(tasks)) {
            for (Path t : threads) {
                String stat;
                try {
                    stat = Files.readString(t.resolve("stat"), StandardCharsets.US_ASCII);
                } catch (IOException gone) {
                    continue;
                }
                totals.add(Long.parseLong(t.getFileName().toString()), classify(ProcStats.statName(stat)),
                        ProcStats.ticksToMicros(ProcStats.statTicks(stat)));
            }
            return true;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /**
     * Per group, the CPU microseconds its threads used since the first reading, grown by each thread's growth since
     * the reading before. Threading: see the class.
     */
    static final class Totals {
        /** Per thread id: {group, CPU micros at the last reading}. */
        private final Map<Long, long[]> last = new HashMap<>();
        private final long[] groups = new long[OTHER + 1];

        /** Thread {@code tid} of group {@code group} has used {@code micros} so far. */
        void add(long tid, int group, long micros) {
            long[] seen = last.get(tid);
            if (seen == null) {
                last.put(tid, new long[] {group, micros});
                groups[group] += micros; // new since the last reading (or the first reading)
            } else if (seen[0] != group || micros < seen[1]) {
                seen[0] = group; // the id of a thread that ended, reused by a new one
                seen[1] = micros;
                groups[group] += micros;
            } else {
                groups[group] += micros - seen[1];
                seen[1] = micros;
            }
        }

        /** A copy of the running totals, one per group. */
        long[] groups() {
            return groups.clone();
        }
    }
}
