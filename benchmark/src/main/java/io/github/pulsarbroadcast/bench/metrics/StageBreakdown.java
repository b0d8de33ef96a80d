package io.github.pulsarbroadcast.bench.metrics;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Where a broadcast run's time went inside the broker, from the broker's own stage histograms
 * ({@code pulsar_broadcast_stage_latency_ms}) over the measured window: the difference of the bucket counts between
 * the last scrape at or before the window's start and the first scrape at or after its end, P50 and P99 by
 * {@code histogram_quantile}'s interpolation (so a value is at best as fine as its bucket, e.g. 20-50 ms). Also the
 * fan-out pass duration and what the scraping cost. In results.json as {@code brokerStages} of a run.
 *
 * <p>Threading: a value object, built once on one thread.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public final class StageBreakdown {

    /** The stages, in the order a message goes through them. */
    public static final List<String> STAGES = List.of("receive_to_persisted", "persisted_to_dispatch",
            "dispatch_to_first_write", "dispatch_to_last_write");
    public static final String STAGE_METRIC = "pulsar_broadcast_stage_latency_ms";
    public static final String PASS_METRIC = "pulsar_broadcast_fanout_pass_ms";

    /** One stage's distribution over the window (ms). Threading: a value object. */
    public static final class Stage {
        public String stage;
        /** Observations in the window (messages, or fan-out passes). */
        public long count;
        public double p50;
        public double p99;
    }

    /** True when the broker exported the stage histograms for this run's topic. */
    public boolean present;
    /** Why the figures are absent, or what to keep in mind. */
    public String note;
    /** The two scrapes used (s since the sampler started) and the seconds between them. */
    public double fromSeconds;
    public double toSeconds;
    public List<Stage> stages = new ArrayList<>();
    public Stage fanOutPass;
    /** Scrapes made, and their duration (HTTP request, body read and parsed) in ms, mean and max. */
    public int scrapes;
    public int failedScrapes;
    public double scrapeMsMean;
    public double scrapeMsMax;
    public long bodyBytesMax;
    /**
     * The plugin's own part of a scrape (its provider, not the stock metrics), mean wall-clock and CPU ms, from the
     * broker's {@code pulsar_broadcast_metrics_scrape*_total} counters over the series; null when not exported.
     */
    public Double pluginScrapeMsMean;
    public Double pluginScrapeCpuMsMean;
    /** Files in the results folder: the series (JSON) and the dashboard (PNG). */
    public String seriesFile;
    public String dashboardFile;

    /** The breakdown over {@code series}' measured window (or the whole series when it has none). */
    public static StageBreakdown of(MetricsSeries series) {
        StageBreakdown b = new StageBreakdown();
        b.scrapeCosts(series);
        SeriesQuery q = new SeriesQuery(series);
        if (q.size() < 2) {
            b.note = "fewer than two successful scrapes of " + series.url;
            return b;
        }
        double[] t = q.times();
        int from = 0;
        int to = t.length - 1;
        if (series.windowFrom != null && series.windowTo != null) {
            for (int i = 0; i < t.length; i++) {
                if (t[i] <= series.windowFrom + 1e-9) {
                    from = i;
                }
            }
            for (int i = t.length - 1; i > from; i--) {
                if (t[i] >= series.windowTo - 1e-9) {
                    to = i;
                }
            }
        }
        b.pluginScrapeCosts(q);
        b.fromSeconds = round(t[from]);
        b.toSeconds = round(t[to]);
        Map<String, TreeMap<Double, double[]>> stages = q.buckets(STAGE_METRIC, SeriesQuery.ALL,
                new String[] {"stage"}, v -> v);
        for (String name : STAGES) {
            TreeMap<Double, double[]> buckets = stages.get(name);
            if (buckets != null) {
                b.stages.add(stage(name, buckets, from, to));
            }
        }
        TreeMap<Double, double[]> pass = q.buckets(PASS_METRIC, SeriesQuery.ALL, new String[0], v -> v).get("");
        if (pass != null) {
            b.fanOutPass = stage("fanout_pass", pass, from, to);
        }
        b.present = !b.stages.isEmpty();
        if (!b.present) {
            b.note = series.has("pulsar_broadcast_") ? "the broker exported pulsar_broadcast_ metrics but no "
                    + STAGE_METRIC + " for this topic"
                    : "the broker exported no pulsar_broadcast_ metrics (a stock broker, or a plugin without"
                    + " metrics)";
        }
        return b;
    }

    private static Stage stage(String name, TreeMap<Double, double[]> buckets, int from, int to) {
        Stage s = new Stage();
        s.stage = name;
        double[] inf = buckets.get(Double.POSITIVE_INFINITY);
        s.count = inf == null ? 0 : Math.round(nz(inf[to]) - nz(inf[from]));
        s.p50 = round(SeriesQuery.quantileAt(0.5, buckets, to, from));
        s.p99 = round(SeriesQuery.quantileAt(0.99, buckets, to, from));
        return s;
    }

    private void pluginScrapeCosts(SeriesQuery q) {
        double[] n = q.sum("pulsar_broadcast_metrics_scrapes_total", SeriesQuery.ALL).get("");
        double[] ms = q.sum("pulsar_broadcast_metrics_scrape_ms_total", SeriesQuery.ALL).get("");
        double[] cpu = q.sum("pulsar_broadcast_metrics_scrape_cpu_ms_total", SeriesQuery.ALL).get("");
        if (n == null || ms == null || cpu == null) {
            return;
        }
        int first = -1;
        int last = -1;
        for (int i = 0; i < n.length; i++) {
            if (!Double.isNaN(n[i]) && !Double.isNaN(ms[i]) && !Double.isNaN(cpu[i])) {
                first = first < 0 ? i : first;
                last = i;
            }
        }
        if (first < 0 || n[last] - n[first] < 1) {
            return;
        }
        pluginScrapeMsMean = round((ms[last] - ms[first]) / (n[last] - n[first]));
        pluginScrapeCpuMsMean = round((cpu[last] - cpu[first]) / (n[last] - n[first]));
    }

    private void scrapeCosts(MetricsSeries series) {
        double sum = 0;
        for (MetricsSeries.Scrape s : series.scrapes) {
            scrapes++;
            if (s.error != null) {
                failedScrapes++;
                continue;
            }
            sum += s.scrapeMs;
            scrapeMsMax = Math.max(scrapeMsMax, round(s.scrapeMs));
            bodyBytesMax = Math.max(bodyBytesMax, s.bytes);
        }
        scrapeMsMean = scrapes == failedScrapes ? 0 : round(sum / (scrapes - failedScrapes));
    }

    private static double nz(double v) {
        return Double.isNaN(v) ? 0 : v;
    }

    private static double round(double v) {
        return Double.isNaN(v) ? Double.NaN : Math.round(v * 10) / 10.0;
    }
}
