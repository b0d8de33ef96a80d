package io.github.pulsarbroadcast.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The open-file limit of a process, read from the OS ({@code /proc/<pid>/limits}, "Max open files"; the hard limit,
 * which a JVM raises its soft limit to at start, and which child processes inherit). Every connection is a file.
 *
 * <p>Threading: stateless; any thread.
 */
final class OsLimits {

    /** Files a JVM keeps open besides its connections (class path jars, logs, epoll, pipes), with room to spare. */
    static final int FILE_RESERVE = 1_000;

    private OsLimits() {
    }

    /** The hard open-file limit of {@code pid} ("self" for this JVM), or -1 when unknown or unlimited. */
    static long openFiles(String pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", pid, "limits"), StandardCharsets.US_ASCII)) {
                if (line.startsWith("Max open files")) {
                    String[] f = line.substring("Max open files".length()).trim().split("\\s+");
                    return f[1].equals("unlimited") ? -1 : Long.parseLong(f[1]);
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux, or the process is gone
        }
        return -1;
    }

    /** This JVM's hard open-file limit (what the fleet and broker JVMs it starts inherit), or -1. */
    static long openFiles() {
        return openFiles("self");
    }

    /** Connections a process with open-file limit {@code limit} can hold (-1: no limit known). */
    static long connectionsWithin(long limit) {
        return limit < 0 ? Long.MAX_VALUE : Math.max(0, limit - FILE_RESERVE);
    }
}
