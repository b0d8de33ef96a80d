package io.github.pulsarbroadcast.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * CPU time and resident memory of a process, from Linux's {@code /proc/<pid>/stat} (utime + stime, in clock ticks)
 * and {@code /proc/<pid>/status} (VmRSS, VmHWM); and the whole machine's busy and stolen CPU time from
 * {@code /proc/stat}.
 *
 * <p>Threading: stateless apart from the clock-tick rate, read once; any thread.
 */
final class ProcStats {

    private static final double TICKS_PER_SECOND = clockTicks();

    private ProcStats() {
    }

    /** True when {@code /proc} describes {@code pid} (Linux, process alive). */
    static boolean available(long pid) {
        return Files.isReadable(Path.of("/proc", Long.toString(pid), "stat"));
    }

    /** User plus system CPU seconds of {@code pid} so far, or -1 when unreadable. */
    static double cpuSeconds(long pid) {
        try {
            return statTicks(Files.readString(Path.of("/proc", Long.toString(pid), "stat"),
                    StandardCharsets.US_ASCII)) / TICKS_PER_SECOND;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** utime + stime in clock ticks of a process's or thread's {@code stat} line. */
    static long statTicks(String stat) {
        // The command name (field 2) is in parentheses and may hold spaces: count fields after the last ')'.
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split("\\s+");
        // After the name: state is field 3, so utime (14) and stime (15) are at 11 and 12 here.
        return Long.parseLong(f[11]) + Long.parseLong(f[12]);
    }

    /** The start time of a process or thread, in clock ticks after boot, from its {@code stat} line (field 22). */
    static long statStartTicks(String stat) {
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split("\\s+");
        return Long.parseLong(f[19]);
    }

    /** The command name of a {@code stat} line: a thread's name, cut to 15 characters by Linux. */
    static String statName(String stat) {
        return stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    }

    /** Clock ticks in microseconds. */
    static long ticksToMicros(long ticks) {
        return Math.round(ticks * 1e6 / TICKS_PER_SECOND);
    }

    /**
     * The machine's CPU seconds so far over all cores, from the first line of {@code /proc/stat}: {@code [0]} busy
     * (user, nice, system, irq, softirq: every process and the kernel), {@code [1]} stolen (time a virtual machine's
     * cores were ready to run but the host ran something else); null when unreadable.
     */
    static double[] machineCpuSeconds() {
        try (java.io.BufferedReader r = Files.newBufferedReader(Path.of("/proc/stat"), StandardCharsets.US_ASCII)) {
            return parseMachineCpu(r.readLine());
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** {@link #machineCpuSeconds} from the aggregate {@code cpu} line; null when it is not one. */
    static double[] parseMachineCpu(String line) {
        if (line == null || !line.startsWith("cpu ")) {
            return null;
        }
        String[] f = line.substring(4).trim().split("\\s+");
        if (f.length < 8) {
            return null;
        }
        // user nice system idle iowait irq softirq steal [guest guest_nice: already counted in user and nice]
        long busy = Long.parseLong(f[0]) + Long.parseLong(f[1]) + Long.parseLong(f[2]) + Long.parseLong(f[5])
                + Long.parseLong(f[6]);
        return new double[] {busy / TICKS_PER_SECOND, Long.parseLong(f[7]) / TICKS_PER_SECOND};
    }

    /** Current resident set (VmRSS) in bytes, or -1. */
    static long rssBytes(long pid) {
        return bytes(statusKb(pid, "VmRSS:"));
    }

    /** Peak resident set over the process's life (VmHWM) in bytes, or -1. */
    static long peakRssBytes(long pid) {
        return bytes(statusKb(pid, "VmHWM:"));
    }

    private static long statusKb(long pid, String key) {
        try {
            List<String> lines = Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"),
                    StandardCharsets.US_ASCII);
            for (String line : lines) {
                if (line.startsWith(key)) {
                    return Long.parseLong(line.substring(key.length()).trim().split("\\s+")[0]);
                }
            }
        } catch (IOException | RuntimeException e) {
            // unreadable: fall through
        }
        return -1;
    }

    private static long bytes(long kb) {
        return kb < 0 ? -1 : kb * 1024;
    }

    /** {@code getconf CLK_TCK}; 100 (Linux's USER_HZ on every common platform) when it cannot be asked. */
    private static double clockTicks() {
        try {
            Process p = new ProcessBuilder("getconf", "CLK_TCK").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
            if (p.waitFor() == 0) {
                return Double.parseDouble(out);
            }
        } catch (IOException | RuntimeException e) {
            // fall back below
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return 100;
    }
}
