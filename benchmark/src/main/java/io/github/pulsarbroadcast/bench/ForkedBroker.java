package io.github.pulsarbroadcast.bench;

import io.github.pulsarbroadcast.standalone.FileTrees;
import io.github.pulsarbroadcast.standalone.Main;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The embedded standalone cluster (ZooKeeper, a bookie and a broker, the {@code standalone} module's main) in a JVM
 * of its own, so that the broker's CPU time and memory can be read from {@code /proc/<pid>} apart from the clients'.
 * It listens on OS-assigned loopback ports, which it prints as {@code service URL:} and {@code admin URL:} lines;
 * its whole output goes to {@code broker-<n>.log} in the results folder.
 *
 * <p>Threading: the main thread starts and closes it; one daemon thread per process copies its output to the log
 * file and hands the two URLs over through {@link #started} (the fields it writes are volatile); a shutdown hook
 * kills the process if this JVM exits without closing it.
 */
final class ForkedBroker implements Broker {

    /**
     * The JVM options that bin/pulsar-broadcast gives the standalone broker on JDK 17, plus
     * {@code jdk.internal.platform} from the root POM's {@code broker.jvm.opens} (the load manager reads container
     * metrics through it).
     */
    static final List<String> OPENS = List.of(
            "--add-opens", "java.base/java.io=ALL-UNNAMED", "--add-opens", "java.base/java.util.zip=ALL-UNNAMED",
            "--add-opens", "java.base/java.nio=ALL-UNNAMED", "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED",
            "--add-opens", "java.base/sun.net=ALL-UNNAMED", "--add-opens", "java.base/java.lang=ALL-UNNAMED",
            "--add-opens", "java.base/jdk.internal.platform=ALL-UNNAMED",
            "--add-opens", "java.management/sun.management=ALL-UNNAMED",
            "--add-opens", "jdk.management/com.sun.management.internal=ALL-UNNAMED",
            "-Dio.netty.tryReflectionSetAccessible=true");

    /** Broker keys every benchmark broker gets: broker publish timestamps, exposed to clients. */
    static final List<String> BROKER_CONF = List.of(
            "brokerEntryMetadataInterceptors="
                    + "org.apache.pulsar.common.intercept.AppendBrokerTimestampMetadataInterceptor",
            "exposingBrokerEntryMetadataToClientEnabled=true");

    private static final long START_TIMEOUT_SECONDS = 180;

    private final Process process;
    private final Path logFile;
    private final Path dataDir;
    private final CountDownLatch started = new CountDownLatch(1);
    private final Thread pump;
    /** Stops the broker if this JVM exits first (Ctrl-C, a failed test), so that no broker is left behind. */
    private final Thread reaper;
    private volatile String serviceUrl;
    private volatile String adminUrl;
    private volatile boolean pluginInstalled;
    private volatile String lastLine = "";
    private volatile String memoryTrouble;

    private ForkedBroker(Process process, Path logFile, Path dataDir) {
        this.process = process;
        this.logFile = logFile;
        this.dataDir = dataDir;
        this.pump = new Thread(this::copyOutput, "bench-broker-output-" + process.pid());
        pump.setDaemon(true);
        pump.start();
        this.reaper = new Thread(process::destroyForcibly, "bench-broker-reaper-" + process.pid());
        Runtime.getRuntime().addShutdownHook(reaper);
    }

    /**
     * Starts a broker JVM ({@code index} numbers the log file) and waits until it serves; throws with the end of
     * its log when it does not.
     */
    static ForkedBroker start(BenchSettings s, int index) throws IOException, InterruptedException {
        Path conf = writeConfig(s);
        Path dataDir = Files.createTempDirectory("pulsar-broadcast-bench-broker-");
        Path log = s.out.resolve("broker-" + index + ".log");
        List<String> cmd = command(s, conf, dataDir, s.out.resolve("broker-" + index + "-gc.log"));
        Files.write(s.out.resolve("broker-" + index + ".cmd"), List.of(String.join(" ", cmd)));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        ForkedBroker broker = new ForkedBroker(p, log, dataDir);
        broker.awaitStarted(s);
        return broker;
    }

    private static List<String> command(BenchSettings s, Path conf, Path dataDir, Path gcLog) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        // No -Xms: the heap grows as the broker needs it, so that its resident memory says something about the mode.
        cmd.addAll(List.of("-Xmx" + s.brokerHeap,
                "-XX:MaxDirectMemorySize=" + s.brokerDirectMemory, "-XX:+UseG1GC", "-XX:+ExitOnOutOfMemoryError"));
        // Every collection and safepoint with wall-clock time, to line up with the metrics when a run goes wrong
        // (-Xlog cannot take a file name with ':', ',' or spaces: none then).
        if (!gcLog.toString().matches(".*[:,\\s].*")) {
            cmd.add("-Xlog:gc,safepoint:file=" + gcLog + ":time,uptime,level,tags");
        }
        cmd.addAll(OPENS);
        if (!s.brokerJavaOpts.isBlank()) {
            cmd.addAll(Arrays.asList(s.brokerJavaOpts.trim().split("\\s+")));
        }
        cmd.addAll(List.of("-cp", brokerClassPath(), Main.class.getName(), "standalone",
                "--port", "0", "--web-port", "0", "--zookeeper-port", "0", "--bookie-port", "0",
                "--bind-address", "127.0.0.1", "--data-dir", dataDir.toString(), "--wipe",
                "--config", conf.toString()));
        if (s.broker == BenchSettings.BrokerKind.STOCK) {
            cmd.add("--no-plugin");
        } else {
            cmd.addAll(List.of("--interceptors-dir", interceptorsDir().toString()));
        }
        return cmd;
    }

    /** Which build of the plugin the broker's class path carries ({@link PluginBuild}). */
    static String pluginBuild() {
        return PluginBuild.describe(brokerClassPath(), File.pathSeparator);
    }

    /** This JVM's class path: the benchmark depends on the standalone module and so carries the broker. */
    private static String brokerClassPath() {
        return System.getProperty("pulsar.broadcast.bench.broker.classpath", System.getProperty("java.class.path"));
    }

    /** The plugin NAR's directory, as bin/pulsar-broadcast and the test set it. */
    static Path interceptorsDir() {
        Path dir = Path.of(System.getProperty("pulsar.broadcast.interceptors", "standalone/target/interceptors"));
        if (!Files.isDirectory(dir)) {
            throw new IllegalStateException("No plugin NAR directory at " + dir.toAbsolutePath() + ": build first"
                    + " (./mvnw -DskipTests install) or set -Dpulsar.broadcast.interceptors");
        }
        return dir.toAbsolutePath();
    }

    private static Path writeConfig(BenchSettings s) throws IOException {
        Path conf = s.out.resolve("broker.conf");
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(conf, StandardCharsets.UTF_8))) {
            w.println("# Written by pulsar-broadcast bench; the standalone applies it over its defaults.");
            BROKER_CONF.forEach(w::println);
            if (s.brokerConfig != null) {
                w.println("# From --broker-config " + s.brokerConfig);
                Files.readAllLines(s.brokerConfig, StandardCharsets.UTF_8).forEach(w::println);
            }
        }
        return conf;
    }

    private void awaitStarted(BenchSettings s) throws InterruptedException, IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(START_TIMEOUT_SECONDS);
        while (!started.await(200, TimeUnit.MILLISECONDS)) {
            if (!process.isAlive() || System.nanoTime() > deadline) {
                String why = process.isAlive() ? "did not start within " + START_TIMEOUT_SECONDS + " s"
                        : "exited with code " + process.exitValue();
                close();
                throw new IOException("The broker JVM " + why + "; see " + logFile + " (last line: " + lastLine + ")");
            }
        }
        if (s.broker == BenchSettings.BrokerKind.PLUGIN && !pluginInstalled) {
            System.err.println("warning: the broker log shows no 'installed its connection handler' line; is the"
                    + " plugin loaded? See " + logFile);
        }
    }

    private void copyOutput() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8));
             PrintWriter out = new PrintWriter(Files.newBufferedWriter(logFile, StandardCharsets.UTF_8), true)) {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                out.println(line);
                lastLine = line;
                watch(line);
            }
        } catch (IOException e) {
            // the process ended or the log could not be written; alive() tells the rest
        }
    }

    private void watch(String line) {
        if (memoryTrouble == null && (line.contains("OutOfMemoryError") || line.contains("OutOfDirectMemory"))) {
            memoryTrouble = line.length() > 300 ? line.substring(0, 300) + "..." : line;
        }
        if (line.contains("installed its connection handler")) {
            pluginInstalled = true;
        } else if (line.contains("service URL:")) {
            serviceUrl = line.substring(line.indexOf("service URL:") + "service URL:".length()).trim();
        } else if (line.contains("admin URL:")) {
            adminUrl = line.substring(line.indexOf("admin URL:") + "admin URL:".length()).trim();
        }
        if (serviceUrl != null && adminUrl != null) {
            started.countDown();
        }
    }

    @Override
    public String serviceUrl() {
        return serviceUrl;
    }

    @Override
    public String adminUrl() {
        return adminUrl;
    }

    @Override
    public Long pid() {
        return process.pid();
    }

    @Override
    public boolean alive() {
        return process.isAlive();
    }

    @Override
    public String memoryTrouble() {
        return memoryTrouble;
    }

    @Override
    public String deathReason() {
        return "the broker JVM (pid " + process.pid() + ") exited with code "
                + (process.isAlive() ? "?" : Integer.toString(process.exitValue())) + "; see " + logFile.getFileName()
                + " (last line: " + lastLine + ")";
    }

    /**
     * Stops the broker like Ctrl-C (SIGTERM runs its shutdown hook), forcibly after 100 s (the standalone halts by
     * itself after 90 s, printing where its stop hung into the broker's log); deletes its data.
     */
    @Override
    public void close() {
        try {
            if (process.isAlive()) {
                process.toHandle().destroy();
                if (!process.waitFor(100, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
                }
            }
            pump.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        FileTrees.deleteQuietly(dataDir);
        try {
            Runtime.getRuntime().removeShutdownHook(reaper);
        } catch (IllegalStateException e) {
            // the JVM is shutting down already; the hook does the same
        }
    }
}
