package io.github.pulsarbroadcast.bench;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertNotNull;
import static org.testng.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.pulsarbroadcast.standalone.FileTrees;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The checks both smoke tests make on a finished benchmark's results folder, whichever client ran the consumers: the
 * files, then per run that every consumer connected, every message was delivered exactly once and in order, and that
 * the figures agree with each other.
 *
 * <p>Threading: stateless; the test thread.
 */
final class ReportChecks {

    /** Modes that the backlog experiment pauses. */
    private static final List<String> PAUSING = List.of("broadcast", "subscriptions", "split");

    private ReportChecks() {
    }

    /** Reads results.json of {@code out}. */
    static JsonNode report(Path out) throws IOException {
        return new ObjectMapper().readTree(out.resolve("results.json").toFile());
    }

    static void assertFilesExist(Path out, List<String> modes, int consumers) {
        List<String> files = new ArrayList<>(List.of("results.json", "results.md", "latency-N" + consumers + ".png",
                "p99-vs-consumers.png", "connect-vs-consumers.png"));
        for (String mode : modes) {
            files.add("connect-" + mode + "-N" + consumers + ".png");
            files.add("consumers/" + mode + "-N" + consumers + ".csv");
        }
        for (String f : files) {
            Path p = out.resolve(f);
            assertTrue(Files.isRegularFile(p) && p.toFile().length() > 0, "missing or empty: " + p);
        }
    }

    /** Checks run {@code i} of the report: mode {@code mode}, {@code consumers} consumers, everything delivered. */
    static void checkRun(JsonNode report, int i, String mode, int consumers, boolean paused) {
        JsonNode run = report.get("runs").get(i);
        assertEquals(run.get("mode").asText(), mode);
        assertEquals(run.get("status").asText(), "ok", mode + ": " + run.path("reason").asText());
        assertEquals(run.get("consumers").asInt(), consumers, mode);
        checkConnect(mode, run.get("connect"), consumers);
        checkDelivery(mode, run.get("delivery"), report.get("settings"), consumers);
        checkLatency(mode, run.get("latency"), run.get("delivery"), consumers);
        checkBroker(mode, run.get("broker"));
        checkClients(mode, run.get("client"));
        checkBacklog(mode, run.get("backlog"), paused && PAUSING.contains(mode), consumers);
    }

    static void assertTableRows(Path out, List<String> modes, String client, int consumers) throws IOException {
        String md = Files.readString(out.resolve("results.md"), StandardCharsets.UTF_8);
        for (String mode : modes) {
            assertTrue(md.contains("| " + mode + " | " + client + " | " + consumers + " |"),
                    "results.md has a row for " + mode + ":\n" + md);
        }
    }

    private static void checkConnect(String mode, JsonNode c, int consumers) {
        assertEquals(c.get("connected").asInt(), consumers, mode);
        assertEquals(c.get("failedToConnect").asInt(), 0, mode);
        JsonNode at = c.get("connectedAtMs");
        assertEquals(at.get("count").asInt(), consumers, mode);
        assertOrdered(mode + " connect", at);
        assertEquals(c.get("allConnectedMs").asLong(), at.get("max").asLong(), mode + ": all connected = last one");
        long binned = 0;
        for (JsonNode bin : c.get("histogram")) {
            binned += bin.get("count").asLong();
        }
        assertEquals(binned, consumers, mode + ": histogram holds every consumer");
    }

    private static void checkDelivery(String mode, JsonNode d, JsonNode settings, int consumers) {
        int total = d.get("totalMessages").asInt();
        assertEquals(total, (int) Math.round((settings.get("warmupSeconds").asInt()
                + settings.get("durationSeconds").asInt()) * settings.get("rate").asDouble()), mode);
        assertEquals(d.get("published").asInt(), total, mode + ": every send acknowledged");
        assertEquals(d.get("publishFailures").asInt(), 0, mode);
        assertEquals(d.get("rejectedSends").asInt(), 0, mode);
        long expected = d.get("expected").asLong();
        assertEquals(expected, (long) total * consumers, mode);
        assertEquals(d.get("delivered").asLong() + d.get("lost").asLong(), expected, mode + ": delivered + lost");
        assertEquals(d.get("delivered").asLong(), expected, mode + ": everything delivered");
        assertEquals(d.get("lost").asLong(), 0, mode);
        assertEquals(d.get("missingAtDrainEnd").asLong(), 0, mode);
        assertEquals(d.get("arrivedLate").asLong(), 0, mode);
        assertEquals(d.get("duplicated").asLong(), 0, mode);
        assertEquals(d.get("outOfOrder").asLong(), 0, mode);
        assertEquals(d.get("consumersComplete").asInt(), consumers, mode);
        assertEquals(d.get("minDeliveredPerConsumer").asLong(), total, mode);
        assertTrue(!d.get("drainCutShort").asBoolean(), mode + ": drain finished");
    }

    private static void checkLatency(String mode, JsonNode l, JsonNode d, int consumers) {
        long measured = (long) (d.get("published").asInt() - d.get("warmupMessages").asInt()) * consumers;
        JsonNode e2e = l.get("endToEnd");
        assertEquals(e2e.get("count").asLong(), measured, mode + ": one latency per measured delivery");
        assertEquals(l.get("fromPublish").get("count").asLong(), measured, mode);
        assertEquals(l.get("missingPairs").asLong(), 0, mode);
        assertOrdered(mode + " e2e", e2e);
        int messages = d.get("published").asInt() - d.get("warmupMessages").asInt();
        assertEquals(l.get("worstFanOut").get("count").asInt(), messages, mode + ": one worst fan-out per message");
        assertEquals(l.get("overRun").size(), messages, mode + ": latency over the run, one point per message");
        if (!mode.equals("non-persistent")) {
            // Persistent topics carry the broker's publish timestamp (AppendBrokerTimestampMetadataInterceptor).
            for (String part : List.of("publishToBroker", "brokerToConsumer")) {
                assertEquals(l.get(part).get("count").asLong(), measured, mode + " " + part);
                assertOrdered(mode + " " + part, l.get(part));
            }
        }
    }

    private static void checkClients(String mode, JsonNode c) {
        assertNotNull(c, mode + ": client figures");
        assertTrue(c.get("cpuSecondsConnect").asDouble() >= 0, mode + ": clients CPU while connecting");
        assertTrue(c.get("cpuSecondsRun").asDouble() > 0, mode + ": clients CPU while publishing");
        assertEquals(c.get("cpuSeconds").asDouble(), c.get("cpuSecondsConnect").asDouble()
                + c.get("cpuSecondsRun").asDouble(), 0.02, mode + ": connect + run CPU");
        assertTrue(c.get("cpuUsPerDelivery").asDouble() > 0, mode + ": clients CPU per delivery");
    }

    private static void checkBroker(String mode, JsonNode b) {
        assertNotNull(b, mode + ": broker figures");
        assertTrue(b.get("cpuSeconds").asDouble() > 0, mode + ": broker CPU");
        assertEquals(b.get("cpuSeconds").asDouble(), b.get("cpuSecondsConnect").asDouble()
                + b.get("cpuSecondsRun").asDouble(), 0.02, mode + ": connect + run CPU");
        assertTrue(b.get("cpuUsPerDelivery").asDouble() > 0, mode + ": broker CPU per delivery");
        assertTrue(b.get("peakRssBytes").asLong() > 0, mode + ": broker RSS");
        assertTrue(b.get("minorPageFaultsWindow").asLong() >= 0, mode + ": broker page faults in the window");
        assertTrue(b.get("lifetimePeakRssBytes").asLong() >= b.get("peakRssBytes").asLong() - 1024 * 1024,
                mode + ": lifetime peak RSS");
        checkThreads(mode, b);
    }

    /**
     * The thread groups alone (without "threads that ended", the remainder) add up to the process's CPU over the
     * window (the groups are read once a second, the process five times: interpolation may differ by up to a second
     * of the broker's CPU at each end), and the remainder is small.
     */
    private static void checkThreads(String mode, JsonNode b) {
        JsonNode w = b.get("threadCpuSecondsWindow");
        JsonNode connect = b.get("threadCpuSecondsConnect");
        assertNotNull(w, mode + ": broker CPU by thread group");
        assertNotNull(connect, mode + ": broker CPU by thread group while connecting");
        double groups = 0;
        for (java.util.Iterator<java.util.Map.Entry<String, JsonNode>> it = w.fields(); it.hasNext(); ) {
            java.util.Map.Entry<String, JsonNode> e = it.next();
            assertTrue(e.getValue().asDouble() >= 0, mode + ": CPU of " + e.getKey());
            groups += RunMeter.ENDED_THREADS.equals(e.getKey()) ? 0 : e.getValue().asDouble();
        }
        double window = b.get("cpuSecondsWindow").asDouble();
        assertEquals(groups, window, 1.0 + 0.1 * window, mode + ": thread groups against the process over the window");
        assertTrue(w.get(RunMeter.ENDED_THREADS).asDouble() <= 0.2 + 0.05 * window, mode + ": CPU no group holds");
        // The floor server's work at a smoke test's size (hundreds of frames, since it writes a connection's frames
        // of a pass into one buffer) can stay under one clock tick (10 ms) of its event loops in both spans, which
        // failed this check once in CI; the broker's event loops always do more (lookups, subscribes, storage).
        if (!"floor".equals(mode)) {
            assertTrue(w.get("event loops").asDouble() + connect.get("event loops").asDouble() > 0,
                    mode + ": the event loops worked");
        }
    }

    private static void checkBacklog(String mode, JsonNode b, boolean pauses, int consumers) {
        if (!pauses) {
            assertTrue(b == null, mode + " did not pause and has no backlog figures");
            return;
        }
        assertNotNull(b, mode + ": backlog figures");
        assertEquals(b.get("pausedConsumers").asInt(), consumers / 5, mode);
        assertEquals(b.get("notCaughtUp").asInt(), 0, mode + ": every paused consumer caught up");
        assertEquals(b.get("catchUpMs").get("count").asInt(), consumers / 5, mode);
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

    static void deleteTree(Path dir) {
        if (dir != null) {
            FileTrees.deleteQuietly(dir);
        }
    }
}
