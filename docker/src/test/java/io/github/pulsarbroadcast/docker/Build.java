package io.github.pulsarbroadcast.docker;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What the docker module's build produced, as the POM passes it to the tests in system properties, and a helper to
 * run a command. Threading: static and stateless; the tests of a class run on one thread.
 */
final class Build {

    private Build() {
    }

    static String property(String name) {
        String value = System.getProperty(name);
        if (value == null || value.isBlank()) {
            throw new IllegalStateException("System property " + name + " is not set: run the tests with Maven");
        }
        return value;
    }

    static String version() {
        return property("pulsar.broadcast.version");
    }

    static String pulsarVersion() {
        return property("pulsar.version");
    }

    static String image() {
        return property("pulsar.broadcast.image");
    }

    /** target/dist: the binary distribution's layout. */
    static Path dist() {
        return Path.of(property("pulsar.broadcast.dist"));
    }

    static Path dockerContext() {
        return Path.of(property("pulsar.broadcast.docker-context"));
    }

    static Path composeFile() {
        return Path.of(property("pulsar.broadcast.compose"));
    }

    /** The repository's docs/ directory. */
    static Path docs() {
        return Path.of(property("pulsar.broadcast.docs"));
    }

    /** docker/prometheus: the Prometheus configuration, the alert rules and their tests. */
    static Path prometheus() {
        return Path.of(property("pulsar.broadcast.prometheus"));
    }

    /** docker/grafana: the dashboard. */
    static Path grafana() {
        return Path.of(property("pulsar.broadcast.grafana"));
    }

    static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The outcome of {@link #run}. */
    static final class Result {
        final int exitCode;
        final String output;

        Result(int exitCode, String output) {
            this.exitCode = exitCode;
            this.output = output;
        }

        @Override
        public String toString() {
            return "exit code " + exitCode + ", output:\n" + output;
        }
    }

    /**
     * Runs a command with stdout and stderr merged, killing it after {@code timeoutSeconds}.
     *
     * @param unset environment variables to remove for the command
     */
    static Result run(List<String> command, List<String> unset, long timeoutSeconds) {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        Map<String, String> env = pb.environment();
        unset.forEach(env::remove);
        try {
            Process p = pb.start();
            p.getOutputStream().close();
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            Thread reader = new Thread(() -> copy(p.getInputStream(), out), "output-of-" + command.get(0));
            reader.start();
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor();
                reader.join(5_000);
                throw new AssertionError("Timed out after " + timeoutSeconds + " s: " + command + "\n" + out);
            }
            reader.join(5_000);
            return new Result(p.exitValue(), out.toString(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("Interrupted while running " + command, e);
        }
    }

    static Result run(String... command) {
        return run(Arrays.asList(command), List.of(), 120);
    }

    /** Whether {@code command} starts and exits with 0 (false if it is not installed). */
    static boolean works(String... command) {
        try {
            return run(new ArrayList<>(Arrays.asList(command)), List.of(), 60).exitCode == 0;
        } catch (UncheckedIOException e) {
            return false;
        }
    }

    private static void copy(InputStream in, ByteArrayOutputStream out) {
        try (in) {
            in.transferTo(out);
        } catch (IOException e) {
            // the process was killed; what was read so far is kept
        }
    }
}
