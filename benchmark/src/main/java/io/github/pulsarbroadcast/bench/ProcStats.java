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
        Stat stat = stat(pid);
        return stat == null ? -1 : stat.ticks / TICKS_PER_SECOND;
    }

    /** Minor page faults of {@code pid} so far ({@link Stat#minorFaults}), or -1 when unreadable. */
    static long minorFaults(long pid) {
        Stat stat = stat(pid);
        return stat == null ? -1 : stat.minorFaults;
    }

    /** The {@code stat} line of {@code pid}, parsed; null when unreadable (gone, or not Linux). */
    private static Stat stat(long pid) {
        try {
            return Stat.of(Files.readString(Path.of("/proc", Long.toString(pid), "stat"), StandardCharsets.US_ASCII));
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /**
     * What a reader needs of one {@code stat} line, parsed once, without a regular expression (a reading of every
     * thread of a broker parses about 150 lines once a second). Immutable.
     */
    static final class Stat {
        /** The command name: a thread's name, cut to 15 characters by Linux. */
        final String name;
        /** utime + stime (fields 14 and 15), in clock ticks. */
        final long ticks;
        /** The start time (field 22), in clock ticks after boot. */
        final long startTicks;
        /**
         * Minor page faults (field 10): pages mapped in without reading a file, mostly memory touched for the first
         * time (the kernel zeroes each page).
         */
        final long minorFaults;

        private Stat(String name, long ticks, long startTicks, long minorFaults) {
            this.name = name;
            this.ticks = ticks;
            this.startTicks = startTicks;
            this.minorFaults = minorFaults;
        }

        /** Parses a {@code stat} line; the name (field 2) is in parentheses and may hold spaces and parentheses. */
        static Stat of(String stat) {
            int close = stat.lastIndexOf(')');
            String name = stat.substring(stat.indexOf('(') + 1, close);
            // After the name, fields are single-space separated: the state (field 3) is field 0 here, so minflt (10)
            // is 7, utime (14) and stime (15) are 11 and 12, and starttime (22) is 19.
            int start = close + 2;
            long minflt = 0;
            long utime = 0;
            long stime = 0;
            for (int field = 0; field <= 19; field++) {
                int end = stat.indexOf(' ', start);
                if (end < 0) {
                    end = stat.length();
                }
                if (field == 7) {
                    minflt = Long.parseLong(stat, start, end, 10);
                } else if (field == 11) {
                    utime = Long.parseLong(stat, start, end, 10);
                } else if (field == 12) {
                    stime = Long.parseLong(stat, start, end, 10);
                } else if (field == 19) {
                    return new Stat(name, utime + stime, Long.parseLong(stat, start, end, 10), minflt);
                }
                start = end + 1;
            }
            throw new IllegalArgumentException("not a stat line: " + stat);
        }
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
