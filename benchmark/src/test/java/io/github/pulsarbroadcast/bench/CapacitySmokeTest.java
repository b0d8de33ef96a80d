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
 * A small capacity run with the fleet (10 broadcast consumers, two short steps) against a real broker: the steps
 * come in order on the same consumers, each with its own messages, figures and verdict, and the report shows them.
 * Whether a step passes depends on the machine, so only the structure and the bookkeeping are checked.
 *
 * <p>Threading: TestNG's test thread runs the benchmark in this JVM; the benchmark forks the broker and the fleet.
 */
public class CapacitySmokeTest {

    private static final int CONSUMERS = 10;

    private Path out;

    @BeforeClass(alwaysRun = true)
    public void createFolder() throws Exception {
        out = Files.createTempDirectory("bench-capacity-");
    }

    @Test(groups = "integration", timeOut = 300_000)
    public void stepsUpTheRateOnTheSameConsumersAndReportsEachStep() throws Exception {
        int exit = BenchMain.execute("--preset", "quick", "--client", "fleet", "--modes", "broadcast",
                "--consumers", Integer.toString(CONSUMERS), "--capacity-rates", "2,4", "--step-seconds", "2",
                "--capacity-p99", "600000", "--metrics-interval", "1", "--out", out.toString(), "--no-progress");
        assertEquals(exit, 0, "exit code");
        JsonNode run = ReportChecks.report(out).get("runs").get(0);
        assertEquals(run.get("status").asText(), "ok", run.path("reason").asText());
        JsonNode steps = run.get("capacity");
        assertTrue(steps.size() >= 1 && steps.size() <= 2, steps.toString());
        JsonNode lastPassed = null;
        for (int k = 0; k < steps.size(); k++) {
            JsonNode step = steps.get(k);
            double rate = k == 0 ? 2 : 4;
            assertEquals(step.get("rate").asDouble(), rate, 0.001);
            assertEquals(step.get("messages").asInt(), (int) (rate * 2), "messages of the step");
            assertEquals(step.get("expected").asLong(), (long) rate * 2 * CONSUMERS, "every consumer, every message");
            assertTrue(step.get("delivered").asLong() <= step.get("expected").asLong());
            if (step.get("passed").asBoolean()) {
                assertTrue(step.get("delivered").asLong() >= 0.99 * step.get("expected").asLong());
                // CPU per delivery divides by every delivery of the step's window, which holds its own.
                assertTrue(step.get("deliveredInWindow").asLong() >= 0.9 * step.get("delivered").asLong(),
                        step.toString());
                // The broker's own count over the window, from its metrics (scraped every second here).
                assertTrue(step.get("brokerDeliveredInWindow").asLong() > 0, step.toString());
                lastPassed = step;
            } else {
                assertTrue(step.hasNonNull("stoppedBecause"), "a failed step says why");
                assertEquals(k, steps.size() - 1, "the first failed step ends the run");
            }
        }
        if (lastPassed != null) {
            assertEquals(run.get("sustained").get("rate").asDouble(), lastPassed.get("rate").asDouble(), 0.001);
        }
        assertEquals(run.get("delivery").get("duplicated").asLong(), 0);
        assertEquals(run.get("delivery").get("outOfOrder").asLong(), 0);
        assertTrue(Files.readString(out.resolve("results.md")).contains("## Capacity"), "results.md has the table");
        assertTrue(Files.isRegularFile(out.resolve("capacity-p99.png")), "capacity chart");
    }

    /**
     * With a P99 limit no step can meet (1 ms), the first step fails and the run steps back down to the first rate:
     * that step comes last, with its own messages, its slices and its verdict, and never counts as sustained. (Should
     * a step meet 1 ms after all, there is no step back down, which is checked too.)
     */
    @Test(groups = "integration", timeOut = 300_000)
    public void afterTheFailedStepStepsBackDownAndReportsWhenTheLatencyReturned() throws Exception {
        Path down = out.resolve("down");
        int exit = BenchMain.execute("--preset", "quick", "--client", "fleet", "--modes", "broadcast",
                "--consumers", Integer.toString(CONSUMERS), "--capacity-rates", "2,4", "--step-seconds", "2",
                "--capacity-p99", "1", "--step-down-seconds", "6", "--out", down.toString(), "--no-progress");
        assertEquals(exit, 0, "exit code");
        JsonNode run = ReportChecks.report(down).get("runs").get(0);
        assertEquals(run.get("status").asText(), "ok", run.path("reason").asText());
        JsonNode steps = run.get("capacity");
        int failed = -1;
        for (int k = 0; k < steps.size(); k++) {
            if (!steps.get(k).get("stepDown").asBoolean() && !steps.get(k).get("passed").asBoolean()) {
                failed = k;
                break;
            }
        }
        if (failed < 0) {
            assertEquals(steps.size(), 2, "every step passed: no step back down");
            return;
        }
        assertEquals(steps.size(), failed + 2, "the step back down follows the failed step and ends the run");
        JsonNode back = steps.get(failed + 1);
        assertTrue(back.get("stepDown").asBoolean());
        assertEquals(back.get("rate").asDouble(), 2, 0.001, "the highest rate that passed (2), or the first (2)");
        assertEquals(back.get("messages").asInt(), 12, "6 s at 2 msg/s");
        assertEquals(back.get("expected").asLong(), 12L * CONSUMERS);
        assertTrue(back.get("slices").size() >= 1 && back.get("slices").size() <= 2, back.toString());
        assertTrue(back.get("recoveryLevelMs").asLong() >= 50, back.toString());
        if (run.hasNonNull("sustained")) {
            assertTrue(!run.get("sustained").get("stepDown").asBoolean(), "the step back down is never sustained");
        }
        assertEquals(run.get("delivery").get("duplicated").asLong(), 0);
        assertTrue(Files.readString(down.resolve("results.md")).contains("back down:"), "results.md shows it");
    }

    @AfterClass(alwaysRun = true)
    public void deleteFolder() throws Exception {
        ReportChecks.deleteTree(out);
    }
}
