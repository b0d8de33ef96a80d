package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;

import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastSubscription;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Producer;
import org.awaitility.core.ConditionTimeoutException;
import org.testng.SkipException;
import org.testng.annotations.AfterMethod;
import org.testng.annotations.Test;

/**
 * The Go client ({@code github.com/apache/pulsar-client-go}, the version pinned in
 * {@code src/test/go/broadcastconsumer/go.mod}) on a broadcast subscription, written as docs/usage.md shows it:
 * type Failover, a consumer name, {@code pulsar.subscription.mode=broadcast} as a consumer property. A Go consumer
 * creates the subscription (no Java consumer first: the consumer property alone must select broadcast), a second
 * one joins with the key as a subscription property, then a Java consumer, and each receives every message in
 * order; the first Go consumer leaves, messages are published while it is away, and a new process under its name
 * receives exactly those (its position was kept by name), taking them from the consumer's channel ({@code Chan()}) as
 * usage.md's snippet does (the others call {@code Receive}). The test builds the
 * consumer with the {@code go} tool (the module proxy must be reachable the first time); without {@code go} it is
 * skipped.
 *
 * <p>Threading: the test thread drives the processes; one reader thread per process collects its output.
 */
public class BroadcastGoClientTest extends BroadcastTestBase {

    private static final Path SOURCE = Path.of("src", "test", "go", "broadcastconsumer").toAbsolutePath();
    private static final Path BINARY = Path.of("target", "go", "broadcastconsumer").toAbsolutePath();
    private final ClientProcesses processes = new ClientProcesses();

    @Test(groups = "integration", timeOut = 600_000)
    public void goConsumersReceiveEveryMessageInOrderAndResumeByName() throws Exception {
        buildGoConsumer();
        String topic = newTopic("go");
        // The producer first: its string schema is stored while the topic is idle (stock refuses a schema to the
        // first schema-aware client of a topic that already has clients, such as the Go consumers, which have none).
        try (Producer<String> producer = producer(topic)) {
            List<String> go0 = start(topic, "go-0", 10);
            awaitReady(go0);
            assertTrue(brokerSubscription(topic, "fleet") instanceof BroadcastSubscription,
                    "the Go consumer's property selected broadcast: " + brokerSubscription(topic, "fleet"));
            List<String> go1 = start(topic, "go-1", 20, "subscription-property");
            awaitReady(go1);
            Consumer<String> java = closeAfterTest(broadcastConsumer(topic, "fleet", "java"));
            List<String> first = publish(producer, "alert", 10);
            assertEquals(receive(java, 10), first);
            awaitDone(go0, first);
            await().atMost(Duration.ofSeconds(30)).until(() -> brokerSubscription(topic, "fleet").getConsumers()
                    .stream().noneMatch(c -> "go-0".equals(c.consumerName())));
            List<String> later = publish(producer, "later", 10);
            List<String> back = start(topic, "go-0", 10, "chan");
            awaitReady(back);
            awaitDone(back, later);
            List<String> all = new ArrayList<>(first);
            all.addAll(later);
            awaitDone(go1, all);
            assertEquals(receive(java, 10), later);
        }
    }

    /**
     * Builds the Go consumer into target/go, or skips the test when there is no {@code go} tool of 1.24 or newer or
     * the Go module proxy cannot be reached (the build's output is in target/go/build.log).
     */
    private static void buildGoConsumer() throws Exception {
        Files.createDirectories(BINARY.getParent());
        Path log = BINARY.resolveSibling("build.log");
        String version;
        try {
            version = run(log, 60, "go", "version");
        } catch (IOException e) {
            throw new SkipException("No Go tool on the PATH: the Go client test needs go (1.24 or newer)");
        }
        Matcher minor = Pattern.compile("go1\\.(\\d+)").matcher(version);
        if (!minor.find() || Integer.parseInt(minor.group(1)) < 24) {
            throw new SkipException("The Go client test needs go 1.24 or newer (its go.mod); `go version` said: "
                    + version.trim());
        }
        Files.deleteIfExists(BINARY);
        String built = run(log, 480, "go", "build", "-mod=readonly", "-o", BINARY.toString(), ".");
        if (!Files.isExecutable(BINARY)) {
            if (built.contains("dial tcp") || built.contains("proxy.golang.org") || built.contains("GOPROXY")) {
                throw new SkipException("The Go module proxy cannot be reached to fetch the Go client: " + built);
            }
            throw new AssertionError("go build of " + SOURCE + " failed: " + built);
        }
    }

    /**
     * Runs a command in the Go consumer's source directory (no go.work above it applies), its output to {@code log}
     * (so that a long output cannot fill a pipe), and returns that output; kills it after {@code seconds}.
     */
    private static String run(Path log, int seconds, String... command) throws Exception {
        Files.deleteIfExists(log);
        ProcessBuilder builder = new ProcessBuilder(command).directory(SOURCE.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile());
        builder.environment().put("GOWORK", "off");
        Process p = builder.start();
        try {
            if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
                throw new AssertionError(String.join(" ", command) + " took more than " + seconds + " s: "
                        + Files.readString(log));
            }
        } finally {
            p.destroyForcibly();
        }
        return Files.readString(log);
    }

    /**
     * Starts a Go consumer; {@code how}: "subscription-property" (else the key is a consumer property), "chan" (take
     * the messages from the consumer's channel, else with {@code Receive}).
     */
    private List<String> start(String topic, String name, int count, String... how) throws IOException {
        List<String> command = new ArrayList<>(List.of(BINARY.toString(), cluster.serviceUrl(), topic, "fleet", name,
                String.valueOf(count)));
        command.addAll(List.of(how));
        // the Go client's own log lines (WARN and above, logrus's text format on stderr) are left out
        return processes.start(name, l -> l.startsWith("time="), command.toArray(new String[0]));
    }

    private static void awaitReady(List<String> out) {
        awaitLine(out, "READY");
        assertEquals(out.get(0), "READY", "the Go consumer failed: " + out);
    }

    /** The consumer printed {@code expected}, in order, and then DONE. */
    private static void awaitDone(List<String> out, List<String> expected) {
        awaitLine(out, "DONE");
        assertEquals(out.subList(1, out.size()), withDone(expected), "the Go consumer's output");
    }

    /** Waits up to a minute for {@code line} or a failure in {@code out}; a time-out shows the output so far. */
    private static void awaitLine(List<String> out, String line) {
        try {
            await().atMost(Duration.ofSeconds(60)).until(() -> out.contains(line) || ClientProcesses.failed(out));
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("no " + line + " from the Go consumer in 60 s; its output: " + out, e);
        }
    }

    private static List<String> withDone(List<String> values) {
        List<String> lines = new ArrayList<>(values);
        lines.add("DONE");
        return lines;
    }

    @AfterMethod(alwaysRun = true)
    public void stopProcesses() {
        processes.stopAll();
    }
}
