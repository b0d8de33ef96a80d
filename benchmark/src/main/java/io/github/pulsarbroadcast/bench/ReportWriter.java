package io.github.pulsarbroadcast.bench;

import io.github.pulsarbroadcast.bench.core.ConsumerTracker;
import io.github.pulsarbroadcast.bench.metrics.DashboardImage;
import io.github.pulsarbroadcast.bench.metrics.MetricsSeries;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes the results folder: results.json (the run's description, the effective settings and every
 * {@link ModeResult}), results.md ({@link MarkdownReport}), one CSV per run with every consumer's figures under
 * {@code consumers/}, and at the end the PNG charts ({@link Charts}).
 *
 * <p>Threading: the main thread only.
 */
final class ReportWriter {

    private final Path dir;
    private final BenchSettings settings;
    private final Map<String, Object> header = new LinkedHashMap<>();
    private final ObjectMapper json = new ObjectMapper()
            .enable(SerializationFeature.INDENT_OUTPUT)
            .setSerializationInclusion(JsonInclude.Include.NON_NULL);
    private List<String> charts = List.of();

    ReportWriter(BenchSettings settings, String command) throws IOException {
        this.dir = settings.out;
        this.settings = settings;
        Files.createDirectories(dir.resolve("consumers"));
        header.put("tool", "pulsar-broadcast bench");
        header.put("command", command);
        header.put("startedAt", now());
        header.put("machine", Machine.describe());
        header.put("machineSummary", Machine.summary());
        header.put("brokerSummary", brokerSummary(settings));
    }

    private static String now() {
        return OffsetDateTime.now().truncatedTo(ChronoUnit.SECONDS).toString();
    }

    private static String brokerSummary(BenchSettings s) {
        switch (s.broker) {
            case EXTERNAL:
                return "existing cluster " + s.serviceUrl + (s.brokerPid == null ? " (CPU and memory not measured)"
                        : " (broker pid " + s.brokerPid + ")");
            case STOCK:
                return "stock Pulsar 2.10.5 standalone without the plugin, own JVM, max heap " + s.brokerHeap
                        + ", direct memory " + s.brokerDirectMemory + (s.freshBroker ? ", fresh per run" : "");
            default:
                return "Pulsar 2.10.5 standalone with the broadcast plugin, own JVM, max heap " + s.brokerHeap
                        + ", direct memory " + s.brokerDirectMemory + (s.freshBroker ? ", fresh per run" : "")
                        + "; plugin classes: " + ForkedBroker.pluginBuild();
        }
    }

    Path dir() {
        return dir;
    }

    /** Rewrites results.json and results.md with the runs so far. */
    void writeResults(List<ModeResult> results) throws IOException {
        Map<String, Object> doc = new LinkedHashMap<>(header);
        doc.remove("machineSummary");
        doc.remove("brokerSummary");
        doc.put("settings", settings);
        doc.put("charts", charts);
        doc.put("runs", results);
        json.writeValue(dir.resolve("results.json").toFile(), doc);
        Files.writeString(dir.resolve("results.md"), MarkdownReport.document(header, settings, results, charts),
                StandardCharsets.UTF_8);
    }

    /** Draws the charts and writes the final results.json and results.md. */
    List<String> finish(List<ModeResult> results) throws IOException {
        header.put("finishedAt", now());
        List<String> problems = new ArrayList<>();
        charts = Charts.render(results, dir, problems);
        if (!problems.isEmpty()) {
            header.put("chartProblems", problems);
        }
        writeResults(results);
        return problems;
    }

    /**
     * A broadcast run's broker metrics: the series as {@code metrics/<mode>-N<n>.json} and its dashboard as
     * {@code dashboard-<mode>-N<n>.png} (a repeated run gets {@code -2}, {@code -3}, ...); the file names go into
     * the run's stage breakdown. A PNG that cannot be drawn becomes a note.
     */
    void writeMetrics(ModeResult r, MetricsSeries series) throws IOException {
        if (series == null || r.brokerStages == null) {
            return;
        }
        Files.createDirectories(dir.resolve("metrics"));
        String name = r.mode.cliName() + "-N" + r.consumers;
        for (int k = 2; Files.exists(dir.resolve("metrics").resolve(name + ".json")); k++) {
            name = r.mode.cliName() + "-N" + r.consumers + "-" + k;
        }
        series.write(dir.resolve("metrics").resolve(name + ".json"));
        r.brokerStages.seriesFile = "metrics/" + name + ".json";
        try {
            DashboardImage.render(series, dir.resolve("dashboard-" + name + ".png"));
            r.brokerStages.dashboardFile = "dashboard-" + name + ".png";
        } catch (IOException | RuntimeException | Error e) {
            r.notes.add("the dashboard PNG could not be drawn: " + Errors.brief(e));
        }
    }

    /** {@code consumers/<mode>-N<n>.csv}: one line per consumer. */
    void writeConsumers(ModeResult r, ConsumerTracker[] trackers) throws IOException {
        if (r.delivery == null && r.connect == null) {
            return;
        }
        Path file = dir.resolve("consumers").resolve(r.mode.cliName() + "-N" + r.consumers + ".csv");
        int published = r.delivery == null ? 0 : r.delivery.published;
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(file, StandardCharsets.UTF_8))) {
            w.println("consumer,subscription,connected_at_ms,subscribe_ms,received,delivered,lost,duplicated,"
                    + "out_of_order,paused,catch_up_ms");
            for (ConsumerTracker t : trackers) {
                long delivered = Math.max(0, t.delivered());
                w.printf("%d,%s,%d,%d,%d,%d,%d,%d,%d,%s,%d%n", t.index(),
                        t.subscription() == null ? "" : t.subscription(), t.connectedAtMs(), t.subscribeMs(),
                        t.receipts(), delivered, published - delivered, t.duplicates(), t.outOfOrder(),
                        t.pauseGroup(), t.catchUpMs());
            }
        }
    }
}
