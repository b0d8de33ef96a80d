package io.github.pulsarbroadcast.cluster;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Drives {@code bin/pulsar-broadcast cluster} on one cluster directory, as an operator would from a shell: every
 * start, stop, kill and pause of a process goes through the command, and the cluster's ports come from the
 * {@code cluster.env} it writes. Paths come from the system properties the POM sets.
 *
 * <p>Threading: not thread-safe; the test thread calls it. {@link #down} may run from a tear-down after a
 * half-finished {@link #up}: it stops whatever the directory's pid files name.
 */
public final class ClusterCommand {

    /** How long one command may run: an up of the whole cluster on a busy 2-core machine included. */
    private static final long COMMAND_TIMEOUT_SECONDS = 420;

    private final Path dir;

    public ClusterCommand(Path dir) {
        this.dir = dir;
    }

    /** A cluster directory under target/ of this module, unique per name. */
    public static ClusterCommand inTarget(String name) {
        return new ClusterCommand(Path.of(property("pulsar.broadcast.cluster-dir") + "-" + name));
    }

    static String property(String name) {
        String value = System.getProperty(name);
        if (value == null || value.isBlank()) {
            throw new IllegalStateException("System property " + name + " is not set: run the tests with Maven");
        }
        return value;
    }

    /** The repository's bin/pulsar-broadcast. */
    static Path script() {
        return Path.of(property("pulsar.broadcast.root"), "bin", "pulsar-broadcast").toAbsolutePath().normalize();
    }

    public Path dir() {
        return dir;
    }

    /**
     * {@code up --wipe --ports random} with the POM's Pulsar lib/ and plugin tarball, plus {@code extra} options;
     * fails with the command's output if it fails.
     */
    public Result up(String... extra) {
        List<String> args = new ArrayList<>(List.of("up", "--wipe", "--ports", "random",
                "--pulsar-dist", property("pulsar.broadcast.pulsar-dist"),
                "--plugin-tarball", property("pulsar.broadcast.plugin-tarball")));
        args.addAll(Arrays.asList(extra));
        return check(run(args.toArray(new String[0])));
    }

    /** {@code down}; never throws, so that a tear-down always gets to the end. */
    public Result down() {
        if (!Files.isDirectory(dir)) {
            return new Result(0, "no cluster directory " + dir);
        }
        try {
            return run("down");
        } catch (RuntimeException | AssertionError e) {
            return new Result(-1, String.valueOf(e));
        }
    }

    public Result start(String node) {
        return check(run("start", node));
    }

    public Result stop(String node) {
        return check(run("stop", node));
    }

    public Result restart(String node) {
        return check(run("restart", node));
    }

    public Result kill(String node) {
        return check(run("kill", node));
    }

    public Result pause(String node) {
        return check(run("pause", node));
    }

    public Result resume(String node) {
        return check(run("resume", node));
    }

    public Result plugin(String action, String... brokers) {
        List<String> args = new ArrayList<>(List.of("plugin", action));
        args.addAll(Arrays.asList(brokers));
        return check(run(args.toArray(new String[0])));
    }

    public Result status(String... extra) {
        List<String> args = new ArrayList<>(List.of("status"));
        args.addAll(Arrays.asList(extra));
        return check(run(args.toArray(new String[0])));
    }

    /** The KEY=VALUE lines of cluster.env. */
    public Map<String, String> env() {
        Map<String, String> env = new LinkedHashMap<>();
        try {
            for (String line : Files.readAllLines(dir.resolve("cluster.env"), StandardCharsets.UTF_8)) {
                int eq = line.indexOf('=');
                if (!line.startsWith("#") && eq > 0) {
                    env.put(line.substring(0, eq), line.substring(eq + 1));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return env;
    }

    public String serviceUrl() {
        return env().get("SERVICE_URL");
    }

    public String adminUrl() {
        return env().get("ADMIN_URL");
    }

    /** The broker-N nodes, in order. */
    public List<String> brokers() {
        List<String> brokers = new ArrayList<>();
        for (String node : env().get("NODES").split(",")) {
            if (node.startsWith("broker-")) {
                brokers.add(node);
            }
        }
        return brokers;
    }

    /** The broker node whose service URL is {@code brokerUrl} (pulsar://127.0.0.1:port), as a lookup answers. */
    public String brokerNode(String brokerUrl) {
        for (String b : brokers()) {
            if (brokerUrl.equals("pulsar://127.0.0.1:" + env().get(envKey(b, "PORT")))) {
                return b;
            }
        }
        throw new AssertionError(brokerUrl + " is none of the brokers " + env());
    }

    public String webUrl(String broker) {
        return "http://127.0.0.1:" + env().get(envKey(broker, "WEB_PORT"));
    }

    static String envKey(String node, String suffix) {
        return node.toUpperCase().replace('-', '_') + "_" + suffix;
    }

    /** The node's log file (this run's: the command starts a new one at every start). */
    public Path log(String node) {
        String name = node.startsWith("broker-") ? "pulsar-broker.log"
                : node.startsWith("bookie-") ? "bookkeeper.log" : "zookeeper.log";
        return dir.resolve(node).resolve("logs").resolve(name);
    }

    /** Whether the pid file names a live process (running or paused). */
    public boolean alive(String node) {
        Path pidFile = dir.resolve(node).resolve("pid");
        try {
            if (!Files.exists(pidFile)) {
                return false;
            }
            long pid = Long.parseLong(Files.readString(pidFile).trim());
            return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false) && !zombie(pid);
        } catch (IOException | NumberFormatException e) {
            return false;
        }
    }

    /**
     * Whether {@code pid} has exited and only waits to be reaped by its parent (state Z in /proc): the JDK calls such
     * a process alive, and one that exited during start-up stays so for a moment.
     */
    private static boolean zombie(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            int end = stat.lastIndexOf(')');
            return end > 0 && end + 2 < stat.length() && stat.charAt(end + 2) == 'Z';
        } catch (IOException e) {
            return false;
        }
    }

    /** Runs {@code bin/pulsar-broadcast cluster ARGS --dir DIR} with stdout and stderr merged. */
    public Result run(String... args) {
        List<String> command = new ArrayList<>(List.of("bash", script().toString(), "cluster"));
        command.addAll(Arrays.asList(args));
        command.add("--dir");
        command.add(dir.toString());
        return exec(command, COMMAND_TIMEOUT_SECONDS);
    }

    static Result exec(List<String> command, long timeoutSeconds) {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().remove("PULSAR_BROADCAST_CLUSTER_DIR");
        try {
            Process p = pb.start();
            p.getOutputStream().close();
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            Thread reader = new Thread(() -> copy(p.getInputStream(), out), "output-of-cluster-command");
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

    private static Result check(Result r) {
        if (r.exitCode != 0) {
            throw new AssertionError("bin/pulsar-broadcast cluster failed: " + r);
        }
        return r;
    }

    private static void copy(InputStream in, ByteArrayOutputStream out) {
        try (in) {
            byte[] buf = new byte[8192];
            for (int n; (n = in.read(buf)) > 0; ) {
                synchronized (out) {
                    out.write(buf, 0, n);
                }
            }
        } catch (IOException e) {
            // the process was killed; what was read so far is kept
        }
    }

    /** The outcome of a command. */
    public static final class Result {
        public final int exitCode;
        public final String output;

        Result(int exitCode, String output) {
            this.exitCode = exitCode;
            this.output = output;
        }

        @Override
        public String toString() {
            return "exit code " + exitCode + ", output:\n" + output;
        }
    }
}
