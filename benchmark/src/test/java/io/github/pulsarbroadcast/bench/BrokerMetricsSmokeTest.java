package io.github.pulsarbroadcast.bench;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertNull;
import static org.testng.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.github.pulsarbroadcast.bench.metrics.MetricsSeries;
import io.github.pulsarbroadcast.bench.metrics.SeriesQuery;
import io.github.pulsarbroadcast.bench.metrics.StageBreakdown;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.testng.annotations.AfterClass;
import org.testng.annotations.BeforeClass;
import org.testng.annotations.Test;

/**
 * The broker-metrics side of the benchmark against a real broker JVM with the plugin: the {@code quick} preset's
 * broadcast and split runs with a scrape every second, then the series files, the dashboard PNGs and the stage
 * table checked against the known workload (20 consumers, 10 warm-up + 30 measured messages at 10 msg/s): every
 * stage histogram holds about the 30 measured messages over the measured window, the consumers gauge holds the 20
 * consumers, deliveries grew by at least 20 x 30, and the stock metrics of the topic sit beside them. It needs the
 * plugin's {@code pulsar_broadcast_*} metrics (issue 14, item 1).
 *
 * <p>Threading: TestNG's test thread runs the benchmark in this JVM; the benchmark forks the broker.
 */
public class BrokerMetricsSmokeTest {

    private static final int CONSUMERS = 20;
    private static final int MEASURED = 30;

    private Path out;

    @BeforeClass(alwaysRun = true)
    public void createFolder() throws Exception {
        out = Files.createTempDirectory("bench-metrics-");
    }

    @Test(groups = "integration", timeOut = 300_000)
    public void broadcastRunsReportTheBrokerStagesAndDrawTheDashboard() throws Exception {
        int exit = BenchMain.execute("--preset", "quick", "--modes", "broadcast,split", "--metrics-interval", "1",
                "--out", out.toString(), "--no-progress");
        assertEquals(exit, 0, "exit code");
        JsonNode runs = ReportChecks.report(out).get("runs");
        for (int i = 0; i < 2; i++) {
            String mode = i == 0 ? "broadcast" : "split";
            JsonNode stages = runs.get(i).get("brokerStages");
            assertEquals(runs.get(i).get("status").asText(), "ok", mode);
            assertTrue(stages.get("present").asBoolean(), mode + ": " + stages);
            assertEquals(stages.get("failedScrapes").asInt(), 0, mode);
            assertEquals(stages.get("stages").size(), StageBreakdown.STAGES.size(), mode);
            // Summed over the run's subscriptions: split's 4 may each count every message.
            int subscriptions = runs.get(i).get("subscriptions").asInt();
            for (JsonNode s : stages.get("stages")) {
                long count = s.get("count").asLong();
                assertTrue(count >= MEASURED - 2 && count <= subscriptions * (MEASURED + 11L), mode + ": " + s);
                assertTrue(s.get("p50").asDouble() <= s.get("p99").asDouble(), mode + ": " + s);
            }
            assertTrue(Files.size(out.resolve(stages.get("dashboardFile").asText())) > 10_000, mode);
            checkSeries(mode, MetricsSeries.read(out.resolve(stages.get("seriesFile").asText())));
        }
        String md = Files.readString(out.resolve("results.md"));
        assertTrue(md.contains("## Where the time goes (broker stages, from the broker's metrics)"), md);
        assertTrue(md.contains("[dashboard-broadcast-N20.png]"), md);
    }

    private static void checkSeries(String mode, MetricsSeries series) {
        SeriesQuery q = new SeriesQuery(series);
        int last = q.size() - 1;
        assertTrue(last >= 3, mode + ": scrapes " + q.size());
        Map<String, double[]> states = q.sum("pulsar_broadcast_consumers", SeriesQuery.ALL);
        assertEquals(states.get("")[last], CONSUMERS, 0.0, mode + ": connected consumers at the last scrape");
        double[] delivered = q.sum("pulsar_broadcast_messages_delivered_total", SeriesQuery.ALL).get("");
        assertTrue(delivered[last] >= CONSUMERS * MEASURED, mode + ": delivered " + delivered[last]);
        assertTrue(q.sum("pulsar_rate_in", SeriesQuery.ALL).containsKey(""), mode + ": stock pulsar_rate_in");
        assertTrue(q.sum("process_cpu_seconds_total", SeriesQuery.ALL).containsKey(""), mode + ": process CPU");
        assertTrue(!q.sum("pulsar_broadcast_executor_tasks_total", SeriesQuery.ALL, "thread").isEmpty(),
                mode + ": executor threads");
        List<MetricsSeries.Scrape> scrapes = series.scrapes;
        assertNull(scrapes.get(scrapes.size() - 1).error, mode);
    }

    @AfterClass(alwaysRun = true)
    public void deleteFolder() throws Exception {
        ReportChecks.deleteTree(out);
    }
}
