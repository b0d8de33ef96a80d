package io.github.pulsarbroadcast.bench.metrics;

import io.github.pulsarbroadcast.standalone.BuildVersion;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code pulsar-broadcast bench dashboard SERIES...}: renders the dashboard PNG again from saved series files (a
 * run's {@code metrics/<mode>-N<n>.json}, or a results folder or its {@code metrics/} folder for all of them), and
 * prints each file's stage breakdown.
 *
 * <p>Threading: picocli calls {@link #call} on the main thread.
 */
@Command(name = "dashboard", mixinStandardHelpOptions = true, versionProvider = BuildVersion.class,
        usageHelpWidth = 110,
        description = {"Render the broker-metrics dashboard PNG again from saved series files (metrics/*.json of a"
                + " benchmark's results folder; a folder means every series file in it or in its metrics/ folder)."
                + " Grafana is not needed: the panels mirror docker/grafana/pulsar-broadcast.json.", ""})
public final class DashboardCommand implements Callable<Integer> {

    @Parameters(paramLabel = "SERIES", arity = "1..*", description = "Series files or folders.")
    List<Path> inputs;

    @Option(names = "--out", paramLabel = "PNG_OR_DIR", description = "Where to write: a .png file (one input file"
            + " only) or a folder (default: dashboard-<name>.png in the results folder next to metrics/, else next"
            + " to the series file).")
    Path out;

    @Override
    public Integer call() throws IOException {
        List<Path> files = new ArrayList<>();
        for (Path p : inputs) {
            files.addAll(seriesFiles(p));
        }
        if (files.isEmpty()) {
            System.err.println("No series files (*.json) in " + inputs);
            return 2;
        }
        if (out != null && out.toString().endsWith(".png") && files.size() > 1) {
            System.err.println("--out names one PNG but there are " + files.size() + " series files");
            return 2;
        }
        for (Path f : files) {
            MetricsSeries series = MetricsSeries.read(f);
            Path png = target(f);
            DashboardImage.render(series, png);
            System.out.println(png.toAbsolutePath() + ": " + summary(StageBreakdown.of(series)));
        }
        return 0;
    }

    private static List<Path> seriesFiles(Path p) throws IOException {
        if (!Files.isDirectory(p)) {
            return List.of(p);
        }
        Path dir = Files.isDirectory(p.resolve("metrics")) ? p.resolve("metrics") : p;
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(f -> f.getFileName().toString().endsWith(".json")).sorted().collect(Collectors.toList());
        }
    }

    /** The PNG for series file {@code f}. */
    Path target(Path f) {
        if (out != null && out.toString().endsWith(".png")) {
            return out;
        }
        String name = "dashboard-" + f.getFileName().toString().replaceAll("\\.json$", "") + ".png";
        if (out != null) {
            return out.resolve(name);
        }
        Path dir = f.toAbsolutePath().getParent();
        boolean inMetrics = dir.getFileName() != null && dir.getFileName().toString().equals("metrics");
        return (inMetrics ? dir.getParent() : dir).resolve(name);
    }

    /** One line: each stage's P50 / P99, or why there are none. */
    static String summary(StageBreakdown b) {
        if (!b.present) {
            return b.note;
        }
        return b.stages.stream().map(s -> String.format(Locale.ROOT, "%s P50 %.1f / P99 %.1f ms (%,d)", s.stage,
                s.p50, s.p99, s.count)).collect(Collectors.joining("; "));
    }
}
