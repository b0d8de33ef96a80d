package io.github.pulsarbroadcast.bench;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import org.testng.annotations.AfterClass;
import org.testng.annotations.BeforeClass;
import org.testng.annotations.Test;

/**
 * A topic move in the middle of a small fleet run against a real broker: the topic is unloaded, every consumer
 * reconnects, the report says when they were all subscribed again and how many duplicates each had, and nothing is
 * lost. The timings depend on the machine; only that they exist and the bookkeeping adds up is checked. A move command
 * ({@code --move-command}) gets the topic's name, writes its output to move-command.log, and its failure is reported.
 *
 * <p>Threading: TestNG's test thread runs the benchmark in this JVM; the benchmark forks the broker and the fleet.
 */
public class TopicMoveSmokeTest {

    private static final int CONSUMERS = 20;

    private Path out;

    @BeforeClass(alwaysRun = true)
    public void createFolder() throws Exception {
        out = Files.createTempDirectory("bench-move-");
    }

    /**
     * Fleet readers resume from the last entry they received, which stock 2.10 sends again; like the stock client
     * they drop it (regression, twenty-sixth session's review: each reader counted one duplicate per move, blamed on
     * the broker in the move table).
     */
    @Test(groups = "integration", timeOut = 300_000)
    public void fleetReadersComeBackAfterTheMoveWithoutDuplicates() throws Exception {
        Path dir = Files.createTempDirectory("bench-move-readers-");
        int exit = BenchMain.execute("--preset", "quick", "--client", "fleet", "--modes", "readers",
                "--consumers", "10", "--rate", "5", "--warmup", "2", "--duration", "8",
                "--move-topic-after", "3", "--out", dir.toString(), "--no-progress");
        assertEquals(exit, 0, "exit code");
        JsonNode run = ReportChecks.report(dir).get("runs").get(0);
        assertEquals(run.get("status").asText(), "ok", run.path("reason").asText());
        JsonNode move = run.get("move");
        assertTrue(move.hasNonNull("allBackSeconds"), "every reader subscribed again while publishing: " + move);
        JsonNode delivery = run.get("delivery");
        assertEquals(delivery.get("lost").asLong(), 0, delivery.toString());
        assertEquals(delivery.get("duplicated").asLong(), 0, delivery.toString());
    }

    @Test(groups = "integration", timeOut = 300_000)
    public void everyConsumerComesBackAfterTheMoveAndNothingIsLost() throws Exception {
        int exit = BenchMain.execute("--preset", "quick", "--client", "fleet", "--modes", "broadcast",
                "--consumers", Integer.toString(CONSUMERS), "--rate", "5", "--warmup", "2", "--duration", "12",
                "--move-topic-after", "3", "--out", out.toString(), "--no-progress");
        assertEquals(exit, 0, "exit code");
        JsonNode run = ReportChecks.report(out).get("runs").get(0);
        assertEquals(run.get("status").asText(), "ok", run.path("reason").asText());
        JsonNode move = run.get("move");
        assertEquals(move.get("afterSeconds").asInt(), 3);
        assertTrue(move.hasNonNull("unloadSeconds"), move.toString());
        assertTrue(move.hasNonNull("allBackSeconds"), "everyone subscribed again while publishing: " + move);
        assertTrue(move.get("allBackSeconds").asDouble() >= 0, move.toString());
        JsonNode delivery = run.get("delivery");
        assertEquals(delivery.get("lost").asLong(), 0, delivery.toString());
        assertEquals(move.get("duplicates").asLong(), delivery.get("duplicated").asLong(),
                "the move's duplicates are the run's");
        assertEquals(move.get("duplicatesPerConsumer").get("count").asLong(), CONSUMERS);
        assertTrue(Files.readString(out.resolve("results.md")).contains("## Topic move"), "results.md has the table");
    }

    @Test(groups = "integration", timeOut = 300_000)
    public void aMoveCommandRunsWithTheTopicAndItsFailureIsReported() throws Exception {
        Path dir = out.resolve("command");
        int exit = BenchMain.execute("--preset", "quick", "--client", "fleet", "--modes", "broadcast",
                "--consumers", "5", "--rate", "5", "--warmup", "1", "--duration", "4", "--move-topic-after", "1",
                "--move-command", "echo moving {topic}; exit 3", "--out", dir.toString(), "--no-progress");
        assertEquals(exit, 0, "exit code");
        JsonNode run = ReportChecks.report(dir).get("runs").get(0);
        assertEquals(run.get("status").asText(), "ok", run.path("reason").asText());
        JsonNode move = run.get("move");
        assertEquals(move.get("by").asText(), "echo moving {topic}; exit 3");
        assertTrue(move.get("unloadError").asText().contains("the move command exited with 3"), move.toString());
        String log = Files.readString(dir.resolve("move-command.log"));
        assertTrue(log.contains("moving " + run.get("topic").asText()), log);
        assertTrue(log.startsWith("# "), "a line naming the run first: " + log);
        assertEquals(run.get("delivery").get("lost").asLong(), 0, run.get("delivery").toString());
    }

    @AfterClass(alwaysRun = true)
    public void deleteFolder() throws Exception {
        ReportChecks.deleteTree(out);
    }
}
