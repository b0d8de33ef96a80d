package io.github.pulsarbroadcast.bench;

import static org.testng.Assert.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.testng.annotations.AfterClass;
import org.testng.annotations.BeforeClass;
import org.testng.annotations.Test;

/**
 * Runs the {@code quick} preset for real with the stock Java client (a broker JVM with the plugin, every broker mode,
 * 20 consumers) with a short backlog pause on top, and checks the report ({@link ReportChecks}): files present,
 * every message delivered once and in order in every mode, and figures that agree with each other.
 *
 * <p>Threading: TestNG's test thread runs the benchmark in this JVM; the benchmark forks the broker.
 */
public class QuickPresetSmokeTest {

    private static final int CONSUMERS = 20;
    private static final List<String> MODES = List.of("broadcast", "subscriptions", "readers", "non-persistent",
            "split");

    private Path out;

    @BeforeClass(alwaysRun = true)
    public void createFolder() throws Exception {
        out = Files.createTempDirectory("bench-quick-");
    }

    @Test(groups = "integration", timeOut = 300_000)
    public void quickPresetDeliversEverythingAndWritesAConsistentReport() throws Exception {
        int exit = BenchMain.execute("--preset", "quick", "--out", out.toString(), "--no-progress",
                "--pause-fraction", "0.2", "--pause-after", "1", "--pause-seconds", "1");
        assertEquals(exit, 0, "exit code");
        ReportChecks.assertFilesExist(out, MODES, CONSUMERS);
        JsonNode report = ReportChecks.report(out);
        assertEquals(report.get("runs").size(), MODES.size(), "one run per mode");
        for (int i = 0; i < MODES.size(); i++) {
            ReportChecks.checkRun(report, i, MODES.get(i), CONSUMERS, true);
            assertEquals(report.get("runs").get(i).get("clientKind").asText(), "java");
        }
        ReportChecks.assertTableRows(out, MODES, "java", CONSUMERS);
    }

    @AfterClass(alwaysRun = true)
    public void deleteFolder() throws Exception {
        ReportChecks.deleteTree(out);
    }
}
