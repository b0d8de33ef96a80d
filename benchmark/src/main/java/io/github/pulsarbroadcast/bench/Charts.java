package io.github.pulsarbroadcast.bench;

import io.github.pulsarbroadcast.bench.core.Mode;
import io.github.pulsarbroadcast.bench.core.Percentiles;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Supplier;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.internal.chartpart.Chart;
import org.knowm.xchart.style.AxesChartStyler;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The PNG charts of a report (XChart, rendered headless): latency percentiles per mode at each N, each mode's
 * connect-time histogram at each N, and P99 latency and connect time against N.
 *
 * <p>Threading: stateless; the main thread calls {@link #render} once at the end.
 */
final class Charts {

    private static final int WIDTH = 1000;
    private static final int HEIGHT = 560;

    private Charts() {
    }

    /** Writes every chart the results allow into {@code dir}; returns the file names (and notes failures). */
    static List<String> render(List<ModeResult> results, Path dir, List<String> problems) {
        System.setProperty("java.awt.headless", "true");
        List<String> files = new ArrayList<>();
        for (int n : consumerCounts(results)) {
            save(() -> latencyChart(results, n), dir, "latency-N" + n, files, problems);
        }
        for (ModeResult r : results) {
            if (r.connect != null && !r.connect.histogram.isEmpty()) {
                save(() -> connectHistogram(r), dir, "connect-" + r.mode.cliName() + "-N" + r.consumers, files,
                        problems);
            }
        }
        save(() -> againstN(results, true), dir, "p99-vs-consumers", files, problems);
        save(() -> againstN(results, false), dir, "connect-vs-consumers", files, problems);
        for (int n : consumerCounts(results)) {
            save(() -> overRun(results, n), dir, "latency-over-run-N" + n, files, problems);
        }
        save(() -> capacity(results), dir, "capacity-p99", files, problems);
        return files;
    }

    private static TreeSet<Integer> consumerCounts(List<ModeResult> results) {
        TreeSet<Integer> ns = new TreeSet<>();
        results.forEach(r -> ns.add(r.consumers));
        return ns;
    }

    /** Builds a chart (null: nothing to draw) and writes it; a failure is noted, never thrown. */
    private static void save(Supplier<Chart<?, ?>> build, Path dir, String name, List<String> files,
            List<String> problems) {
        try {
            Chart<?, ?> chart = build.get();
            if (chart == null) {
                return;
            }
            BitmapEncoder.saveBitmap(chart, dir.resolve(name + ".png").toString(), BitmapEncoder.BitmapFormat.PNG);
            files.add(name + ".png");
        } catch (IOException | RuntimeException | Error e) {
            problems.add("chart " + name + ".png could not be drawn: " + Errors.brief(e));
        }
    }

    /** Bars of P50, P95, P99, P99.9 and max end-to-end latency, one series per mode; null when none has data. */
    static CategoryChart latencyChart(List<ModeResult> results, int n) {
        CategoryChart chart = new CategoryChartBuilder().width(WIDTH).height(HEIGHT)
                .title(String.format(Locale.ROOT, "End-to-end latency, %,d consumers", n))
                .xAxisTitle("percentile").yAxisTitle("latency (ms)").build();
        style(chart.getStyler());
        List<String> labels = List.of("P50", "P95", "P99", "P99.9", "max");
        int series = 0;
        for (ModeResult r : results) {
            if (r.consumers != n || r.latency == null || r.latency.endToEnd.count == 0) {
                continue;
            }
            Percentiles p = r.latency.endToEnd;
            chart.addSeries(r.mode.cliName() + repeatSuffix(r), labels, List.of(p.p50, p.p95, p.p99, p.p999, p.max));
            series++;
        }
        return series == 0 ? null : chart;
    }

    /** How many consumers finished connecting in each time bin (NTT's figure 5). */
    static CategoryChart connectHistogram(ModeResult r) {
        CategoryChart chart = new CategoryChartBuilder().width(WIDTH).height(HEIGHT)
                .title(String.format(Locale.ROOT, "Connect times, %s, %,d consumers", r.mode, r.consumers))
                .xAxisTitle("connected within (s from the first subscribe, bin start)").yAxisTitle("consumers")
                .build();
        style(chart.getStyler());
        chart.getStyler().setLegendVisible(false);
        chart.getStyler().setXAxisLabelRotation(45);
        List<String> x = new ArrayList<>();
        List<Long> y = new ArrayList<>();
        for (ModeResult.Bin b : r.connect.histogram) {
            x.add(String.format(Locale.ROOT, "%.3f", b.fromMs / 1000.0).replaceAll("\\.?0+$", ""));
            y.add(b.count);
        }
        chart.addSeries("consumers", x, y);
        return chart;
    }

    /** P99 end-to-end latency ({@code p99 == true}) or time to connect all consumers, against N, per mode. */
    static XYChart againstN(List<ModeResult> results, boolean p99) {
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT)
                .title(p99 ? "P99 end-to-end latency against consumers" : "Time to connect all consumers")
                .xAxisTitle("consumers").yAxisTitle(p99 ? "P99 latency (ms)" : "all connected (s)").build();
        style(chart.getStyler());
        Map<Mode, List<double[]>> points = new LinkedHashMap<>();
        for (ModeResult r : results) {
            Double y = p99 ? (r.latency == null || r.latency.endToEnd.count == 0 ? null
                    : (double) r.latency.endToEnd.p99)
                    : (r.connect == null || r.connect.allConnectedMs == null ? null
                    : r.connect.allConnectedMs / 1000.0);
            if (y != null && r.ok()) {
                points.computeIfAbsent(r.mode, m -> new ArrayList<>()).add(new double[] {r.consumers, y});
            }
        }
        if (points.isEmpty()) {
            return null;
        }
        points.forEach((mode, list) -> {
            double[] xs = list.stream().mapToDouble(pt -> pt[0]).toArray();
            double[] ys = list.stream().mapToDouble(pt -> pt[1]).toArray();
            chart.addSeries(mode.cliName(), xs, ys).setMarker(SeriesMarkers.CIRCLE);
        });
        chart.getStyler().setXAxisDecimalPattern("#,###");
        return chart;
    }

    /**
     * Per measured message, the time until the last consumer had it, against its intended send time, one series per
     * run at {@code n} (mode, and the repetition when there are several); null when no run has the points.
     */
    static XYChart overRun(List<ModeResult> results, int n) {
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT)
                .title(String.format(Locale.ROOT, "Worst fan-out per message over the run, %,d consumers", n))
                .xAxisTitle("intended send time (s from the first measured message)")
                .yAxisTitle("time until the last consumer had it (ms)").build();
        style(chart.getStyler());
        int series = 0;
        for (ModeResult r : results) {
            if (r.consumers != n || r.latency == null || r.latency.overRun.isEmpty()) {
                continue;
            }
            double[] xs = r.latency.overRun.stream().mapToDouble(p -> p[0]).toArray();
            double[] ys = r.latency.overRun.stream().mapToDouble(p -> p[1]).toArray();
            String name = r.mode.cliName() + (r.clientKind == null ? "" : " (" + r.clientKind + ")")
                    + repeatSuffix(r);
            chart.addSeries(name, xs, ys).setMarker(SeriesMarkers.CIRCLE);
            series++;
        }
        return series == 0 ? null : chart;
    }

    /** Each capacity run's steps: P99 against the deliveries per second reached; null without capacity runs. */
    static XYChart capacity(List<ModeResult> results) {
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT)
                .title("Capacity: P99 end-to-end latency against deliveries per second")
                .xAxisTitle("deliveries per second").yAxisTitle("P99 latency (ms)").build();
        style(chart.getStyler());
        int series = 0;
        for (ModeResult r : results) {
            if (r.capacity == null || r.capacity.isEmpty()) {
                continue;
            }
            // The steps up only: the step back down would bend the curve back on itself (it is in the tables).
            double[] xs = r.capacity.stream().filter(c -> !c.stepDown).mapToDouble(c -> c.deliveriesPerSecond)
                    .toArray();
            double[] ys = r.capacity.stream().filter(c -> !c.stepDown).mapToDouble(c -> c.endToEnd.p99).toArray();
            String name = String.format(Locale.ROOT, "%s %,d", r.mode.cliName(), r.consumers) + repeatSuffix(r);
            chart.addSeries(name, xs, ys).setMarker(SeriesMarkers.CIRCLE);
            series++;
        }
        chart.getStyler().setXAxisDecimalPattern("#,###");
        return series == 0 ? null : chart;
    }

    /** " #2" for a mode's second run of one size ({@code --repeat}): series names must differ within a chart. */
    private static String repeatSuffix(ModeResult r) {
        return r.repeat > 0 ? " #" + (r.repeat + 1) : "";
    }

    private static void style(AxesChartStyler styler) {
        styler.setLegendPosition(Styler.LegendPosition.InsideNW);
        styler.setChartBackgroundColor(java.awt.Color.WHITE);
        styler.setPlotGridLinesVisible(true);
        styler.setAntiAlias(true);
    }
}
