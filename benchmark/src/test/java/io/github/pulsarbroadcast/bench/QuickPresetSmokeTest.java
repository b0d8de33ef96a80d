package io.github.pulsarbroadcast.bench;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertNotNull;
import static org.testng.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.testng.annotations.AfterClass;
import org.testng.annotations.BeforeClass;
import org.testng.annotations.Test;

/**
 * Runs the {@code quick} preset for real (a broker JVM with the plugin, every mode, 20 consumers) with a short
 * backlog pause on top, and checks the report: files present, every message delivered once and in order in every
 * mode, and figures that agree with each other.
 *
 * <p>Threading: TestNG's test thread runs the benchmark in this JVM; the benchmark forks the broker.
 */
public class QuickPresetSmokeTest {

    private static final int CONSUMERS = 20;
    private static final List<String> MODES = List.of("broadcast", "subscriptions", "readers", "non-persistent",
            "split");

    private Path out;
    private JsonNode report;

    @BeforeClass(alwaysRun = true)
    public void createFolder() throws Exception {
        out = Files.createTempDirectory("bench-quick-");
    }

    @Test(groups = "integration", timeOut = 240_000)
    public void quickPresetDeliversEverythingAndWritesAConsistentReport() throws Exception {
        int exit = BenchMain.execute("--preset", "quick", "--out", out.toString(), "--no-progress",
                "--pause-fraction", "0.2", "--pause-after", "1", "--pause-seconds", "1");
        assertEquals(exit, 0, "exit code");
        assertFilesExist();
        report = new ObjectMapper().readTree(out.resolve("results.json").toFile());
        JsonNode runs = report.get("runs");
        assertEquals(runs.size(), MODES.size(), "one run per mode");
        for (int i = 0; i < MODES.size(); i++) {
            JsonNode run = runs.get(i);
            assertEquals(run.get("mode").asText(), MODES.get(i));
            String mode = MODES.get(i);
            assertEquals(run.get("status").asText(), "ok", mode + ": " + run.path("reason").asText());
            assertEquals(run.get("consumers").asInt(), CONSUMERS, mode);
            checkConnect(mode, run.get("connect"));
            checkDelivery(mode, run.get("delivery"), report.get("settings"));
            checkLatency(mode, run.get("latency"), run.get("delivery"), report.get("settings"));
            checkBroker(mode, run.get("broker"));
            checkClients(mode, run.get("client"));
            checkBacklog(mode, run.get("backlog"));
        }
        String md = Files.readString(out.resolve("results.md"), StandardCharsets.UTF_8);
        for (String mode : MODES) {
            assertTrue(md.contains("| " + mode + " | 20 |"), "results.md has a row for " + mode + ":\n" + md);
        }
    }

    private void assertFilesExist() {
        List<String> files = new ArrayList<>(List.of("results.json", "results.md", "broker.conf", "broker-1.log",
                "latency-N20.png", "p99-vs-consumers.png", "connect-vs-consumers.png"));
        for (String mode : MODES) {
            files.add("connect-" + mode + "-N20.png");
            files.add("consumers/" + mode + "-N20.csv");
        }
        for (String f : files) {
            Path p = out.resolve(f);
            assertTrue(Files.isRegularFile(p) && p.toFile().length() > 0, "missing or empty: " + p);
        }
    }

    private static void checkConnect(String mode, JsonNode c) {
        assertEquals(c.get("connected").asInt(), CONSUMERS, mode);
        assertEquals(c.get("failedToConnect").asInt(), 0, mode);
        JsonNode at = c.get("connectedAtMs");
        assertEquals(at.get("count").asInt(), CONSUMERS, mode);
        assertOrdered(mode + " connect", at);
        assertEquals(c.get("allConnectedMs").asLong(), at.get("max").asLong(), mode + ": all connected = last one");
        long binned = 0;
        for (JsonNode bin : c.get("histogram")) {
            binned += bin.get("count").asLong();
        }
        assertEquals(binned, CONSUMERS, mode + ": histogram holds every consumer");
    }

    private static void checkDelivery(String mode, JsonNode d, JsonNode settings) {
        int total = d.get("totalMessages").asInt();
        assertEquals(total, (int) Math.round((settings.get("warmupSeconds").asInt()
                + settings.get("durationSeconds").asInt()) * settings.get("rate").asDouble()), mode);
        assertEquals(d.get("published").asInt(), total, mode + ": every send acknowledged");
        assertEquals(d.get("publishFailures").asInt(), 0, mode);
        long expected = d.get("expected").asLong();
        assertEquals(expected, (long) total * CONSUMERS, mode);
        assertEquals(d.get("delivered").asLong() + d.get("lost").asLong(), expected, mode + ": delivered + lost");
        assertEquals(d.get("delivered").asLong(), expected, mode + ": everything delivered");
        assertEquals(d.get("lost").asLong(), 0, mode);
        assertEquals(d.get("duplicated").asLong(), 0, mode);
        assertEquals(d.get("outOfOrder").asLong(), 0, mode);
        assertEquals(d.get("consumersComplete").asInt(), CONSUMERS, mode);
        assertEquals(d.get("minDeliveredPerConsumer").asLong(), total, mode);
        assertTrue(!d.get("drainCutShort").asBoolean(), mode + ": drain finished");
    }

    private static void checkLatency(String mode, JsonNode l, JsonNode d, JsonNode settings) {
        long measured = (long) (d.get("published").asInt() - d.get("warmupMessages").asInt()) * CONSUMERS;
        JsonNode e2e = l.get("endToEnd");
        assertEquals(e2e.get("count").asLong(), measured, mode + ": one latency per measured delivery");
        assertOrdered(mode + " e2e", e2e);
        if (!mode.equals("non-persistent")) {
            // Persistent topics carry the broker's publish timestamp (AppendBrokerTimestampMetadataInterceptor).
            for (String part : List.of("publishToBroker", "brokerToConsumer")) {
                assertEquals(l.get(part).get("count").asLong(), measured, mode + " " + part);
                assertOrdered(mode + " " + part, l.get(part));
                assertTrue(l.get(part).get("p50").asLong() <= e2e.get("max").asLong(), mode + " " + part);
            }
        }
    }

    private static void checkClients(String mode, JsonNode c) {
        assertNotNull(c, mode + ": benchmark JVM figures");
        assertTrue(c.get("cpuSecondsConnect").asDouble() >= 0, mode + ": clients CPU while connecting");
        assertTrue(c.get("cpuSecondsRun").asDouble() > 0, mode + ": clients CPU while publishing");
        assertEquals(c.get("cpuSeconds").asDouble(), c.get("cpuSecondsConnect").asDouble()
                + c.get("cpuSecondsRun").asDouble(), 0.02, mode + ": connect + run CPU");
    }

    private static void checkBroker(String mode, JsonNode b) {
        assertNotNull(b, mode + ": broker figures");
        assertTrue(b.get("cpuSeconds").asDouble() > 0, mode + ": broker CPU");
        assertEquals(b.get("cpuSeconds").asDouble(), b.get("cpuSecondsConnect").asDouble()
                + b.get("cpuSecondsRun").asDouble(), 0.02, mode + ": connect + run CPU");
        assertTrue(b.get("peakRssBytes").asLong() > 0, mode + ": broker RSS");
        assertTrue(b.get("lifetimePeakRssBytes").asLong() >= b.get("peakRssBytes").asLong() - 1024 * 1024,
                mode + ": lifetime peak RSS");
    }

    private static void checkBacklog(String mode, JsonNode b) {
        boolean pauses = List.of("broadcast", "subscriptions", "split").contains(mode);
        if (!pauses) {
            assertTrue(b == null, mode + " cannot pause and has no backlog figures");
            return;
        }
        assertNotNull(b, mode + ": backlog figures");
        assertEquals(b.get("pausedConsumers").asInt(), CONSUMERS / 5, mode);
        assertEquals(b.get("notCaughtUp").asInt(), 0, mode + ": every paused consumer caught up");
        assertEquals(b.get("catchUpMs").get("count").asInt(), CONSUMERS / 5, mode);
        assertOrdered(mode + " catch-up", b.get("catchUpMs"));
    }

    private static void assertOrdered(String what, JsonNode p) {
        long p50 = p.get("p50").asLong();
        long p95 = p.get("p95").asLong();
        long p99 = p.get("p99").asLong();
        long p999 = p.get("p999").asLong();
        long max = p.get("max").asLong();
        assertTrue(0 <= p50 && p50 <= p95 && p95 <= p99 && p99 <= p999 && p999 <= max,
                what + " percentiles out of order: " + p);
    }

    @AfterClass(alwaysRun = true)
    public void deleteFolder() throws Exception {
        if (out != null) {
            try (Stream<Path> paths = Files.walk(out)) {
                paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }
}
