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
     * Reads every live thread of {@code pid} into {@code totals} (between its {@link Totals#beginReading} and
     * {@link Totals#endReading}, which may span several processes); false, with the totals of the threads read so far
     * updated, when the process cannot be read or the reading thread was interrupted. A thread that ends while it is
     * read is skipped.
     */
    static boolean read(long pid, Totals totals) {
        Path tasks = Path.of("/proc", Long.toString(pid), "task");
        try (DirectoryStream<Path> threads = Files.newDirectoryStream(tasks)) {
            for (Path t : threads) {
                String stat;
                try {
                    stat = Files.readString(t.resolve("stat"), StandardCharsets.US_ASCII);
                } catch (IOException gone) {
                    if (Thread.currentThread().isInterrupted()) {
                        return false;
                    }
                    continue;
                }
                ProcStats.Stat parsed = ProcStats.Stat.of(stat);
                totals.add(Long.parseLong(t.getFileName().toString()), parsed.startTicks, classify(parsed.name),
                        ProcStats.ticksToMicros(parsed.ticks));
            }
            return true;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /**
     * Per group, a running total of CPU microseconds: the first reading adds each thread's CPU so far (only the
     * difference between two readings means anything), every later one each thread's growth since the reading
     * before. A thread is known by its id and start time: a new start time under a known id is a new thread (ids are
     * reused), a known thread under a new name (renamed) moves on with its growth only. Threading: see the class.
     */
    static final class Totals {
        /** Per thread id: {start ticks, CPU micros at the last reading, number of that reading}. */
        private final Map<Long, long[]> last = new HashMap<>();
        private final long[] groups = new long[OTHER + 1];
        private long reading;

        /** Starts a reading (of one or several processes). */
        void beginReading() {
            reading++;
        }

        /** Forgets the threads the reading that ends did not see (they ended). */
        void endReading() {
            last.values().removeIf(seen -> seen[2] != reading);
        }

        /** Thread {@code tid} (started {@code start} ticks after boot) of {@code group} has used {@code micros}. */
        void add(long tid, long start, int group, long micros) {
            long[] seen = last.get(tid);
            if (seen == null || seen[0] != start) {
                last.put(tid, new long[] {start, micros, reading});
                groups[group] += micros; // new since the reading before (or the first reading)
            } else {
                groups[group] += Math.max(0, micros - seen[1]); // a renamed thread's growth goes to its new group
                seen[1] = micros;
                seen[2] = reading;
            }
        }

        /** A copy of the running totals, one per group. */
        long[] groups() {
            return groups.clone();
        }
    }
}
