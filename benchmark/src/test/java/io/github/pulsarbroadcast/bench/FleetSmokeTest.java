package io.github.pulsarbroadcast.bench;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.testng.annotations.AfterClass;
import org.testng.annotations.BeforeClass;
import org.testng.annotations.Test;

/**
 * Runs the {@code quick} preset with the consumer fleet ({@code --client fleet}) in every mode, the floor included,
 * against a real broker JVM with the plugin, and checks the same things as with the stock Java client
 * ({@link ReportChecks}: every consumer connected, every message delivered once and in order, consistent figures),
 * plus the fleet's own: 3 consumers per connection spread over two fleet processes and three loopback source
 * addresses, lookups on, a short backlog pause; one broker JVM for the broker modes in turn
 * ({@code --no-fresh-broker}: each run after the first is told it met a warm broker, the floor's server is its own).
 *
 * <p>Threading: TestNG's test thread runs the benchmark in this JVM; the benchmark forks the broker, the fleet
 * processes and the floor server.
 */
public class FleetSmokeTest {

    private static final int CONSUMERS = 20;
    private static final List<String> MODES = List.of("broadcast", "subscriptions", "readers", "non-persistent",
            "split", "floor");

    private Path out;

    @BeforeClass(alwaysRun = true)
    public void createFolder() throws Exception {
        out = Files.createTempDirectory("bench-fleet-");
    }

    @Test(groups = "integration", timeOut = 420_000)
    public void fleetDeliversEverythingInEveryModeAsTheJavaClientDoes() throws Exception {
        int exit = BenchMain.execute("--preset", "quick", "--client", "fleet", "--modes", String.join(",", MODES),
                "--consumers-per-connection", "3", "--fleet-processes", "2", "--connections-per-address", "3",
                "--no-fresh-broker", "--out", out.toString(), "--no-progress",
                "--pause-fraction", "0.2", "--pause-after", "1", "--pause-seconds", "1");
        assertEquals(exit, 0, "exit code");
        ReportChecks.assertFilesExist(out, MODES, CONSUMERS);
        JsonNode report = ReportChecks.report(out);
        assertEquals(report.get("runs").size(), MODES.size(), "one run per mode");
        for (int i = 0; i < MODES.size(); i++) {
            ReportChecks.checkRun(report, i, MODES.get(i), CONSUMERS, true);
            JsonNode run = report.get("runs").get(i);
            assertEquals(run.get("clientKind").asText(), "fleet");
            JsonNode client = run.get("client");
            assertEquals(client.get("processes").asInt(), 2, "fleet processes");
            assertEquals(client.get("connections").asInt(), 7, "20 consumers at 3 per connection");
            assertEquals(client.get("reconnects").asLong(), 0, MODES.get(i) + ": no reconnects");
            assertEquals(client.get("entryErrors").asLong(), 0, MODES.get(i) + ": every entry readable");
            assertTrue(client.get("layout").asText().contains("3 source address"), client.toString());
            // One broker JVM serves the broker modes in turn; the floor mode gets a floor server of its own.
            int before = MODES.get(i).equals("floor") ? 0 : i;
            assertEquals(run.get("brokerRunsBefore").asInt(), before, MODES.get(i) + ": runs on its broker before");
            assertEquals(run.get("notes").toString().contains("measured run(s) of this benchmark before this one"),
                    before > 0, MODES.get(i) + ": a warm broker is noted: " + run.get("notes"));
        }
        ReportChecks.assertTableRows(out, MODES, "fleet", CONSUMERS);
        assertTrue(Files.readString(out.resolve("results.md")).contains("Broker against the floor"),
                "results.md compares the modes with the floor");
    }

    @AfterClass(alwaysRun = true)
    public void deleteFolder() throws Exception {
        ReportChecks.deleteTree(out);
    }
}
