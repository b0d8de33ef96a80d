package io.github.pulsarbroadcast.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A helper JVM that the benchmark starts (a fleet process, {@code proc.FleetMain}, or the floor server,
 * {@code proc.FloorMain}), as the benchmark JVM sees it: driven by commands, one a line, on its standard input,
 * heard through the lines on its standard output ({@code status <numbers>} lines, the latest kept; {@code error
 * <text>} lines, the latest kept; every other line queued as a reply), its log and standard error in the results
 * folder.
 *
 * <p>Threading: the main thread starts it and sends commands ({@link #send} synchronizes on the writer); one daemon
 * thread reads its output into {@link #status} (volatile), {@link #error} (volatile) and {@link #replies} (a
 * concurrent queue); a shutdown hook kills it if this JVM exits first.
 */
final class ChildJvm {

    private static final long[] NO_STATUS = new long[16];

    private final Process process;
    private final Path log;
    private final Writer in;
    private final BlockingQueue<String> replies = new LinkedBlockingQueue<>();
    private final Thread reaper;
    private volatile long[] status = NO_STATUS;
    private volatile String error;

    private ChildJvm(Process process, Path log) {
        this.process = process;
        this.log = log;
        this.in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        Thread reader = new Thread(this::readOutput, "bench-child-output-" + process.pid());
        reader.setDaemon(true);
        reader.start();
        this.reaper = new Thread(process::destroyForcibly, "bench-child-reaper-" + process.pid());
        Runtime.getRuntime().addShutdownHook(reaper);
    }

    /**
     * Starts {@code mainClass} with {@code args} in a JVM with {@code javaOpts} (space-separated) and this JVM's
     * class path; its log4j log goes to {@code log}, its standard error next to it ({@code <log>.stderr}).
     */
    static ChildJvm start(String javaOpts, String mainClass, List<String> args, Path log) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        if (!javaOpts.isBlank()) {
            cmd.addAll(Arrays.asList(javaOpts.trim().split("\\s+")));
        }
        cmd.addAll(ForkedBroker.OPENS);
        cmd.add("-Dlog4j2.configurationFile=bench-log4j2.xml");
        cmd.add("-Dpulsar.broadcast.bench.log=" + log);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), mainClass));
        cmd.addAll(args);
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.appendTo(
                log.resolveSibling(log.getFileName() + ".stderr").toFile())).start();
        return new ChildJvm(p, log);
    }

    private void readOutput() {
        try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
            for (String line = out.readLine(); line != null; line = out.readLine()) {
                if (line.startsWith("status ")) {
                    status = Arrays.stream(line.substring(7).trim().split(" ")).mapToLong(Long::parseLong)
                            .toArray();
                } else if (line.startsWith("error ")) {
                    error = line.substring(6);
                } else {
                    replies.add(line);
                }
            }
        } catch (IOException | RuntimeException e) {
            // the process ended; alive() tells
        }
    }

    long pid() {
        return process.pid();
    }

    boolean alive() {
        return process.isAlive();
    }

    /** Why it is not alive (exit code, log), for the report. */
    String deathReason() {
        return "process " + process.pid() + " exited with code "
                + (process.isAlive() ? "?" : Integer.toString(process.exitValue())) + "; see " + log.getFileName()
                + ".stderr";
    }

    /** The latest status line's field {@code i}, 0 before the first. */
    long status(int i) {
        long[] s = status;
        return i < s.length ? s[i] : 0;
    }

    String error() {
        return error;
    }

    void send(String command) throws IOException {
        synchronized (in) {
            in.write(command + "\n");
            in.flush();
        }
    }

    /** Waits up to {@code seconds} for a reply starting with {@code prefix}; returns it, or null. */
    String await(String prefix, long seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() < deadline) {
            String line = replies.poll(200, TimeUnit.MILLISECONDS);
            if (line != null && line.startsWith(prefix)) {
                return line;
            }
            if (line == null && !process.isAlive()) {
                return null;
            }
        }
        return null;
    }

    /** Asks it to exit, then makes sure it did (forcibly after {@code seconds}). */
    void stop(long seconds) {
        try {
            send("exit");
            if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (IOException e) {
            process.destroyForcibly();
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        removeHook();
    }

    void kill() {
        process.destroyForcibly();
        removeHook();
    }

    private void removeHook() {
        try {
            Runtime.getRuntime().removeShutdownHook(reaper);
        } catch (IllegalStateException e) {
            // the JVM is shutting down already; the hook does the same
        }
    }
}
