package io.github.pulsarbroadcast.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

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
 * <p>A thread that ends takes its time out of the sum (Linux keeps it in the process's total only): the reader of two
 * readings compares their sum with the process's own CPU over the same span ({@link RunMeter}).
 *
 * <p>Threading: stateless; any thread.
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
     * CPU microseconds of every live thread of {@code pid} by group ({@link #OTHER} + 1 entries) added into
     * {@code into}; false, with {@code into} unchanged in part or whole, when the process cannot be read. A thread
     * that ends while it is read is skipped.
     */
    static boolean read(long pid, long[] into) {
        Path tasks = Path.of("/proc", Long.toString(pid), "task");
        try (DirectoryStream<Path> threads = Files.newDirectoryStream(tasks)) {
            for (Path t : threads) {
                String stat;
                try {
                    stat = Files.readString(t.resolve("stat"), StandardCharsets.US_ASCII);
                } catch (IOException gone) {
                    continue;
                }
                into[classify(ProcStats.statName(stat))] += ProcStats.ticksToMicros(ProcStats.statTicks(stat));
            }
            return true;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }
}
