package io.github.pulsarbroadcast.bench;

import io.github.pulsarbroadcast.bench.core.Percentiles;
import io.github.pulsarbroadcast.bench.metrics.StageBreakdown;
import java.util.List;
import java.util.Locale;

/**
 * The report's "Where the time goes" section for broadcast runs: P50 / P99 of each broker stage over the measured
 * window ({@link StageBreakdown}, from the broker's {@code pulsar_broadcast_stage_latency_ms}) beside the end-to-end
 * P50 / P99 the benchmark measured, the fan-out pass, the scrapes' cost and the dashboard PNG; says so when the
 * broker exported no stage histograms.
 *
 * <p>Threading: stateless; any thread.
 */
final class StageTable {

    private static final String NONE = "–";

    private StageTable() {
    }

    /** The section's body, or "" when no run was sampled. */
    static String markdown(List<ModeResult> results) {
        StringBuilder t = new StringBuilder();
        StringBuilder notes = new StringBuilder();
        for (ModeResult r : results) {
            StageBreakdown b = r.brokerStages;
            if (b == null) {
                continue;
            }
            if (t.length() == 0) {
                t.append("| mode | consumers | E2E P50 / P99 (benchmark) | publish→broker P99 (benchmark)"
                        + " | receive→persisted | persisted→dispatch | dispatch→first write | dispatch→last write"
                        + " | fan-out pass | messages in window | scrapes (mean / max ms)"
                        + " | plugin's part of a scrape (ms, CPU ms) | dashboard |\n");
                t.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
            }
            t.append("| ").append(r.mode).append(" | ").append(MarkdownReport.fmt(r.consumers)).append(" | ")
                    .append(endToEnd(r)).append(" | ").append(publishToBroker(r));
            for (String stage : StageBreakdown.STAGES) {
                t.append(" | ").append(cell(find(b, stage)));
            }
            StageBreakdown.Stage first = find(b, StageBreakdown.STAGES.get(0));
            t.append(" | ").append(cell(b.fanOutPass)).append(" | ")
                    .append(first == null ? NONE : MarkdownReport.fmt(first.count)).append(" | ")
                    .append(String.format(Locale.ROOT, "%d (%.0f / %.0f)", b.scrapes, b.scrapeMsMean,
                            b.scrapeMsMax))
                    .append(" | ").append(b.pluginScrapeMsMean == null ? NONE : String.format(Locale.ROOT,
                            "%.1f / %.1f", b.pluginScrapeMsMean, b.pluginScrapeCpuMsMean))
                    .append(" | ").append(b.dashboardFile == null ? NONE
                    : "[" + b.dashboardFile + "](" + b.dashboardFile + ")").append(" |\n");
            if (!b.present) {
                notes.append("- ").append(r.mode).append(" at ").append(MarkdownReport.fmt(r.consumers))
                        .append(" consumers: no broker stages: ").append(b.note).append('\n');
            }
        }
        if (t.length() == 0) {
            return "";
        }
        return t + "\nBroker stages in ms, P50 / P99 over the measured window, from the broker's"
                + " pulsar_broadcast_stage_latency_ms histograms (bucket counts of the last scrape before the window"
                + " minus those of the first scrape after it; values interpolated inside buckets of 0.5, 1, 5, 10,"
                + " 20, 50, 100, 200, 500, 1000, 2000, 5000 ms, as Prometheus' histogram_quantile does). The stages"
                + " are the broker's part of the end-to-end latency: receive→persisted (the bookie write),"
                + " persisted→dispatch, and dispatch to the first and to the last consumer's write; the rest is the"
                + " producer's leg, the network and the consumers' own queueing. Each scrape costs the broker some"
                + " CPU, which is in its CPU figures (--metrics-interval 0 turns scraping off).\n"
                + (notes.length() == 0 ? "" : "\n" + notes);
    }

    private static StageBreakdown.Stage find(StageBreakdown b, String stage) {
        for (StageBreakdown.Stage s : b.stages) {
            if (s.stage.equals(stage)) {
                return s;
            }
        }
        return null;
    }

    private static String cell(StageBreakdown.Stage s) {
        if (s == null || s.count == 0) {
            return NONE;
        }
        return ms(s.p50) + " / " + ms(s.p99);
    }

    private static String ms(double v) {
        return Double.isFinite(v) ? String.format(Locale.ROOT, v >= 100 ? "%,.0f" : "%.1f", v) : NONE;
    }

    private static String endToEnd(ModeResult r) {
        Percentiles e = r.latency == null ? null : r.latency.endToEnd;
        return e == null || e.count == 0 ? NONE : MarkdownReport.fmt(e.p50) + " / " + MarkdownReport.fmt(e.p99);
    }

    private static String publishToBroker(ModeResult r) {
        Percentiles p = r.latency == null ? null : r.latency.publishToBroker;
        return p == null || p.count == 0 ? NONE : MarkdownReport.fmt(p.p99);
    }
}
