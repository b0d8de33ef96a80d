package io.github.pulsarbroadcast.bench.metrics;

import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.imageio.ImageIO;
import org.knowm.xchart.AnnotationLine;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.internal.chartpart.Chart;
import org.knowm.xchart.style.AxesChartStyler;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * Renders a {@link MetricsSeries} as one PNG: a title band and a grid of panels ({@link DashboardPanels}, each an
 * XChart line chart over the run's time with the measured window marked by two vertical lines), ending with the
 * stage breakdown of the measured window as bars (P50 and P99 per stage, NTT's figure 6). A panel whose metric the
 * broker did not export says so instead of drawing.
 *
 * <p>Threading: stateless; any thread (headless AWT).
 */
public final class DashboardImage {

    private static final int COLUMNS = 3;
    private static final int CELL_W = 640;
    private static final int CELL_H = 330;
    private static final int HEADER_H = 70;
    private static final Map<String, String> SHORT = Map.of("receive_to_persisted", "received→persisted",
            "persisted_to_dispatch", "→dispatch", "dispatch_to_first_write", "→first write",
            "dispatch_to_last_write", "→last write");

    private DashboardImage() {
    }

    /** Writes the dashboard of {@code series} to {@code png}. */
    public static void render(MetricsSeries series, Path png) throws IOException {
        System.setProperty("java.awt.headless", "true");
        List<DashboardPanels.Panel> panels = DashboardPanels.build(series);
        StageBreakdown stages = StageBreakdown.of(series);
        int cells = panels.size() + 1;
        int rows = (cells + COLUMNS - 1) / COLUMNS;
        BufferedImage image = new BufferedImage(COLUMNS * CELL_W, HEADER_H + rows * CELL_H,
                BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, image.getWidth(), image.getHeight());
            header(g, series, stages);
            double[] t = series.times();
            for (int i = 0; i < cells; i++) {
                int x = (i % COLUMNS) * CELL_W;
                int y = HEADER_H + (i / COLUMNS) * CELL_H;
                Graphics2D cell = (Graphics2D) g.create(x, y, CELL_W, CELL_H);
                try {
                    if (i < panels.size()) {
                        drawPanel(cell, panels.get(i), t, series);
                    } else {
                        drawStages(cell, stages);
                    }
                } finally {
                    cell.dispose();
                }
            }
        } finally {
            g.dispose();
        }
        ImageIO.write(image, "png", png.toFile());
    }

    private static void header(Graphics2D g, MetricsSeries s, StageBreakdown stages) {
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 22));
        g.drawString("pulsar-broadcast: " + (s.title == null ? "" : s.title + ", ") + s.topic, 16, 30);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
        String window = s.windowFrom == null ? "no measured window"
                : String.format(Locale.ROOT, "measured window %.1f-%.1f s (dashed lines)", s.windowFrom, s.windowTo);
        g.drawString(String.format(Locale.ROOT, "started %s; %d scrapes of %s every %.1f s (mean %.0f ms); %s."
                + " Rendered by pulsar-broadcast bench (XChart), not Grafana.", Instant.ofEpochMilli(s.startEpochMs),
                stages.scrapes, s.url, s.intervalSeconds, stages.scrapeMsMean, window), 16, 56);
    }

    private static void drawPanel(Graphics2D g, DashboardPanels.Panel p, double[] t, MetricsSeries s) {
        XYChart chart = new XYChartBuilder().width(CELL_W).height(CELL_H).title(p.title)
                .xAxisTitle("s since the run's start").yAxisTitle(p.unit).build();
        style(chart.getStyler());
        int drawn = 0;
        for (Map.Entry<String, double[]> line : p.lines.entrySet()) {
            List<Double> xs = new ArrayList<>();
            List<Double> ys = new ArrayList<>();
            double[] v = line.getValue();
            for (int i = 0; i < v.length && i < t.length; i++) {
                if (Double.isFinite(v[i])) {
                    xs.add(t[i]);
                    ys.add(v[i]);
                }
            }
            if (!xs.isEmpty()) {
                chart.addSeries(line.getKey().isEmpty() ? "all" : line.getKey(), xs, ys)
                        .setMarker(xs.size() > 40 ? SeriesMarkers.NONE : SeriesMarkers.CIRCLE);
                drawn++;
            }
        }
        if (drawn == 0) {
            empty(g, p.title, "no data: the broker exported none of this panel's metrics");
            return;
        }
        chart.getStyler().setYAxisMin(0.0);
        if (s.windowFrom != null) {
            chart.addAnnotation(new AnnotationLine(s.windowFrom, true, false));
            chart.addAnnotation(new AnnotationLine(s.windowTo, true, false));
        }
        paint(g, chart);
    }

    private static void drawStages(Graphics2D g, StageBreakdown b) {
        String title = "Where the time goes (measured window)";
        if (!b.present) {
            empty(g, title, b.note == null ? "no stage histograms" : b.note);
            return;
        }
        CategoryChart chart = new CategoryChartBuilder().width(CELL_W).height(CELL_H).title(title)
                .yAxisTitle("ms").build();
        style(chart.getStyler());
        List<String> names = new ArrayList<>();
        List<Double> p50 = new ArrayList<>();
        List<Double> p99 = new ArrayList<>();
        for (StageBreakdown.Stage st : b.stages) {
            names.add(SHORT.getOrDefault(st.stage, st.stage));
            p50.add(Double.isFinite(st.p50) ? st.p50 : 0);
            p99.add(Double.isFinite(st.p99) ? st.p99 : 0);
        }
        chart.addSeries("P50", names, p50);
        chart.addSeries("P99", names, p99);
        paint(g, chart);
    }

    private static void paint(Graphics2D g, Chart<?, ?> chart) {
        chart.paint(g, CELL_W, CELL_H);
    }

    private static void empty(Graphics2D g, String title, String why) {
        g.setColor(new Color(245, 245, 245));
        g.fillRect(4, 4, CELL_W - 8, CELL_H - 8);
        g.setColor(Color.DARK_GRAY);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
        g.drawString(title, 16, 30);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        g.drawString(why, 16, CELL_H / 2);
    }

    private static void style(AxesChartStyler styler) {
        styler.setLegendPosition(Styler.LegendPosition.InsideNW);
        styler.setChartBackgroundColor(Color.WHITE);
        styler.setPlotGridLinesVisible(true);
        styler.setAntiAlias(true);
        styler.setChartTitleFont(new Font(Font.SANS_SERIF, Font.BOLD, 14));
        styler.setLegendFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
    }
}
