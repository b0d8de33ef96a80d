package io.github.pulsarbroadcast.it;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;

/**
 * Consumers written with another language's Pulsar client, run as processes that print {@code READY} once
 * subscribed, one line per message value, then {@code DONE} (or a line with {@code ERROR}): what the Python and Go
 * client tests start and read.
 *
 * <p>Threading: {@link #start} on the test method's thread and {@link #stopAll} on TestNG's (another one when the
 * method has a time-out), so the processes are in a {@link CopyOnWriteArrayList}; one daemon thread per process
 * appends its output lines to another, which the test reads.
 */
final class ClientProcesses {

    private final List<Process> processes = new CopyOnWriteArrayList<>();

    /**
     * Starts {@code command} and returns its output lines as they come (stdout and stderr merged), but those
     * {@code noise} matches (a client library's own log lines).
     */
    List<String> start(String name, Predicate<String> noise, String... command) throws IOException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        processes.add(p);
        List<String> lines = new CopyOnWriteArrayList<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String l = in.readLine(); l != null; l = in.readLine()) {
                    if (!noise.test(l)) {
                        lines.add(l.trim());
                    }
                }
            } catch (IOException e) {
                // the process ended
            }
        }, "client-" + name);
        reader.setDaemon(true);
        reader.start();
        return lines;
    }

    /** Whether {@code lines} show a failure: the consumer's own error line, an exception's, a traceback or a panic. */
    static boolean failed(List<String> lines) {
        return lines.stream().anyMatch(l -> l.startsWith("ERROR ") || l.contains("Error")
                || l.contains("Traceback") || l.startsWith("panic:") || l.startsWith("fatal error:"));
    }

    /** Kills every process started (after a test, also one that failed half way). */
    void stopAll() {
        for (Process p : processes) {
            p.destroyForcibly();
        }
        processes.clear();
    }
}
