package io.github.pulsarbroadcast.bench;

import io.github.pulsarbroadcast.bench.core.Mode;
import io.github.pulsarbroadcast.bench.core.Percentiles;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * The tables of results.md beside the main one: CPU over the measured window with the idle baselines apart and the
 * producer's schedule; the spread of repeated runs ({@code --repeat}); and every mode against the floor at the same
 * N (P99 and CPU per delivery as ratios).
 *
 * <p>Threading: stateless; any thread.
 */
final class SummaryTables {

    private static final String NONE = "–";

    private SummaryTables() {
    }

    /** One row per run that has a measured window. */
    static String cpuTable(List<ModeResult> results) {
        StringBuilder t = new StringBuilder("| mode | client | consumers | run | window (s) | measured deliveries"
                + " | deliveries/s | broker CPU in window (s) | broker minor page faults in window"
                + " | broker baseline idle / connected (CPU s/s)"
                + " | clients CPU in window (s) | clients baseline idle / connected (CPU s/s)"
                + " | benchmark JVM CPU in window (s) | send lag P99 / max (ms) | achieved rate (msg/s)"
                + " | broker heap after GC / direct (MiB) | other processes and kernel / stolen CPU in window (s)"
                + " | stolen peak (CPU s/s) | layout |\n"
                + "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
        for (ModeResult r : results) {
            if (r.window == null) {
                continue;
            }
            ModeResult.BrokerUsage b = r.broker;
            ModeResult.ClientUsage c = r.client;
            ModeResult.Delivery d = r.delivery;
            t.append(String.format(Locale.ROOT, "| %s | %s | %,d | %d | %.1f | %,d | %,.0f | %s | %s | %s | %s | %s | %s"
                    + " | %s | %s | %s | %s | %s | %s |%n", r.mode, kind(r), r.consumers, r.repeat + 1,
                    r.window.seconds,
                    r.window.deliveries, r.window.seconds > 0 ? r.window.deliveries / r.window.seconds : 0,
                    b == null ? NONE : String.format(Locale.ROOT, "%.2f", b.cpuSecondsWindow),
                    b == null || b.minorPageFaultsWindow < 0 ? NONE
                            : String.format(Locale.ROOT, "%,d", b.minorPageFaultsWindow),
                    b == null ? NONE : baseline(b.idleCpuPerSecond, b.connectedCpuPerSecond),
                    c == null ? NONE : String.format(Locale.ROOT, "%.2f", c.cpuSecondsWindow),
                    c == null ? NONE : baseline(c.idleCpuPerSecond, c.connectedCpuPerSecond),
                    c == null || !"fleet".equals(r.clientKind) ? NONE
                            : String.format(Locale.ROOT, "%.2f", c.benchJvmCpuSecondsWindow),
                    d == null || d.sendLag == null ? NONE : d.sendLag.p99 + " / " + d.sendLag.max,
                    d == null ? NONE : String.format(Locale.ROOT, "%.2f", d.achievedRate),
                    b == null ? NONE : mib(b.heapUsedAfterGcBytes) + " / " + mib(b.directMemoryUsedBytes),
                    r.machine == null ? NONE : (r.machine.otherCpuSecondsWindow < 0 ? NONE
                            : String.format(Locale.ROOT, "%.2f", r.machine.otherCpuSecondsWindow))
                            + String.format(Locale.ROOT, " / %.2f", r.machine.stolenCpuSecondsWindow),
                    r.machine == null ? NONE : String.format(Locale.ROOT, "%.2f", r.machine.peakStolenCpuPerSecond),
                    c == null || c.layout == null ? "stock client" : c.layout));
        }
        return t.toString();
    }

    /**
     * The broker JVM's CPU by group of threads over the measured window and the connect phase, one row each per run
     * (empty when no run has the figures).
     */
    static String threadTable(List<ModeResult> results) {
        StringBuilder t = new StringBuilder();
        for (ModeResult r : results) {
            if (r.broker == null) {
                continue;
            }
            row(t, r, "measured window", r.broker.threadCpuSecondsWindow);
            row(t, r, "connect phase", r.broker.threadCpuSecondsConnect);
        }
        if (t.length() == 0) {
            return "";
        }
        StringBuilder head = new StringBuilder("| mode | client | consumers | run | span | all threads (s)");
        StringBuilder align = new StringBuilder("|---|---|---:|---:|---|---:");
        for (int g = 0; g <= ThreadCpu.OTHER; g++) {
            head.append(" | ").append(ThreadCpu.name(g));
            align.append("|---:");
        }
        head.append(" | ").append(RunMeter.ENDED_THREADS).append(" |\n");
        align.append("|---:|\n");
        return head.append(align).append(t).toString();
    }

    private static void row(StringBuilder t, ModeResult r, String span, java.util.Map<String, Double> seconds) {
        if (seconds == null) {
            return;
        }
        double all = seconds.values().stream().mapToDouble(Double::doubleValue).sum();
        t.append(String.format(Locale.ROOT, "| %s | %s | %,d | %d | %s | %.2f", r.mode, kind(r), r.consumers,
                r.repeat + 1, span, all));
        for (double v : seconds.values()) {
            t.append(String.format(Locale.ROOT, " | %.2f (%.0f%%)", v, all > 0 ? 100 * v / all : 0));
        }
        t.append(" |\n");
    }

    private static String mib(long bytes) {
        return bytes < 0 ? NONE : String.format(Locale.ROOT, "%,d", bytes >> 20);
    }

    private static String kind(ModeResult r) {
        return r.clientKind == null ? "java" : r.clientKind;
    }

    private static String baseline(double idle, double connected) {
        return (idle < 0 ? NONE : String.format(Locale.ROOT, "%.3f", idle)) + " / "
                + (connected < 0 ? NONE : String.format(Locale.ROOT, "%.3f", connected));
    }

    /** Median [min–max] of the ok runs of each (mode, client, N) that ran more than once; "" when none did. */
    static String repeatTable(List<ModeResult> results) {
        Map<String, List<ModeResult>> groups = new LinkedHashMap<>();
        for (ModeResult r : results) {
            if (r.ok()) {
                groups.computeIfAbsent(r.mode + "|" + kind(r) + "|" + r.consumers, k -> new ArrayList<>()).add(r);
            }
        }
        StringBuilder t = new StringBuilder();
        for (List<ModeResult> g : groups.values()) {
            if (g.size() < 2) {
                continue;
            }
            if (t.length() == 0) {
                t.append("| mode | client | consumers | runs | all connected (s) | E2E P99 (ms) | worst fan-out max"
                        + " (ms) | broker CPU us/delivery | clients CPU us/delivery |\n"
                        + "|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
            }
            ModeResult first = g.get(0);
            t.append(String.format(Locale.ROOT, "| %s | %s | %,d | %d | %s | %s | %s | %s | %s |%n", first.mode,
                    kind(first), first.consumers, g.size(),
                    spread(g, r -> r.connect.allConnectedMs == null ? Double.NaN : r.connect.allConnectedMs / 1e3),
                    spread(g, r -> r.latency == null ? Double.NaN : r.latency.endToEnd.p99),
                    spread(g, r -> r.latency == null || r.latency.worstFanOut == null ? Double.NaN
                            : r.latency.worstFanOut.max),
                    spread(g, r -> r.broker == null ? Double.NaN : r.broker.cpuUsPerDelivery),
                    spread(g, r -> r.client == null ? Double.NaN : r.client.cpuUsPerDelivery)));
        }
        return t.toString();
    }

    /** "median [min–max]" of {@code f} over {@code runs} (NaN values left out). */
    static String spread(List<ModeResult> runs, ToDoubleFunction<ModeResult> f) {
        double[] v = runs.stream().mapToDouble(f).filter(x -> !Double.isNaN(x)).sorted().toArray();
        if (v.length == 0) {
            return NONE;
        }
        double median = v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
        return num(median) + " [" + num(v[0]) + "–" + num(v[v.length - 1]) + "]";
    }

    private static String num(double v) {
        return String.format(Locale.ROOT, Math.abs(v) >= 100 ? "%,.0f" : Math.abs(v) >= 1 ? "%.1f" : "%.2f", v);
    }

    /** Per capacity run: the highest step that passed and the one that stopped it; "" without capacity runs. */
    static String capacitySummary(List<ModeResult> results) {
        StringBuilder t = new StringBuilder();
        for (ModeResult r : results) {
            if (r.capacity == null) {
                continue;
            }
            if (t.length() == 0) {
                t.append("| mode | client | consumers | layout | sustained rate (msg/s) | deliveries/s | E2E P99 (ms)"
                        + " | worst fan-out max (ms) | broker CPU (cores) | broker CPU us/delivery"
                        + " | clients CPU us/delivery | stopped at |\n"
                        + "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
            }
            ModeResult.CapacityStep ok = r.sustained;
            ModeResult.CapacityStep last = r.capacity.stream().filter(c -> !c.stepDown).reduce((a, b) -> b)
                    .orElse(null);
            String stop = last == null || last.passed ? "every rate passed"
                    : MarkdownReport.trim(last.rate) + " msg/s: " + last.stoppedBecause;
            t.append(String.format(Locale.ROOT, "| %s | %s | %,d | %s | %s | %s | %s | %s | %s | %s | %s | %s |%n",
                    r.mode, kind(r), r.consumers, r.client == null || r.client.layout == null ? "stock client"
                            : r.client.layout, ok == null ? NONE : MarkdownReport.trim(ok.rate),
                    ok == null ? NONE : num(ok.deliveriesPerSecond), ok == null ? NONE : num(ok.endToEnd.p99),
                    ok == null ? NONE : num(ok.worstFanOut.max), ok == null ? NONE : num(ok.brokerCpuPerSecond),
                    ok == null ? NONE : num(ok.brokerCpuUsPerDelivery),
                    ok == null ? NONE : num(ok.clientsCpuUsPerDelivery), r.ok() ? stop : r.status + ": " + r.reason));
        }
        return t.toString();
    }

    /** Every step of every capacity run. */
    static String capacitySteps(List<ModeResult> results) {
        StringBuilder t = new StringBuilder("| mode | consumers | rate (msg/s) | deliveries/s | E2E P50 | P99 | max"
                + " | worst fan-out max | delivered | all deliveries in window | send lag max (ms)"
                + " | broker CPU (cores) | broker CPU us/delivery | broker-counted deliveries in window"
                + " | broker CPU us/broker-counted delivery | clients CPU us/delivery | result |\n"
                + "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
        for (ModeResult r : results) {
            for (ModeResult.CapacityStep c : r.capacity == null ? List.<ModeResult.CapacityStep>of() : r.capacity) {
                t.append(String.format(Locale.ROOT, "| %s | %,d | %s | %s | %,d | %,d | %,d | %,d | %s | %,d | %,d"
                        + " | %s | %s | %s | %s | %s | %s |%n", r.mode, r.consumers, MarkdownReport.trim(c.rate),
                        num(c.deliveriesPerSecond), c.endToEnd.p50, c.endToEnd.p99, c.endToEnd.max,
                        c.worstFanOut.max, MarkdownReport.percent(c.delivered, c.expected), c.deliveredInWindow,
                        c.sendLag.max, num(c.brokerCpuPerSecond), num(c.brokerCpuUsPerDelivery),
                        c.brokerDeliveredInWindow < 0 ? NONE : num(c.brokerDeliveredInWindow),
                        c.brokerDeliveredInWindow < 0 ? NONE : num(c.brokerCpuUsPerBrokerDelivery),
                        num(c.clientsCpuUsPerDelivery), result(c)));
            }
        }
        return t.toString();
    }

    private static String result(ModeResult.CapacityStep c) {
        if (!c.stepDown) {
            return c.passed ? "passed" : c.stoppedBecause;
        }
        return "back down: worst fan-out at or below " + String.format(Locale.ROOT, "%,d", c.recoveryLevelMs)
                + " ms " + (c.recoveredAfterSeconds == null ? "never" : "from " + c.recoveredAfterSeconds + " s on")
                + " (5-s slices: " + slices(c) + ")" + (c.passed ? "" : "; " + c.stoppedBecause);
    }

    private static String slices(ModeResult.CapacityStep c) {
        StringBuilder b = new StringBuilder();
        for (long[] slice : c.slices == null ? List.<long[]>of() : c.slices) {
            b.append(b.length() == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%,d", slice[1]));
        }
        return b.toString();
    }

    /** Each ok run against the floor run at the same N with the same client; "" when there is no floor run. */
    static String floorTable(List<ModeResult> results) {
        StringBuilder t = new StringBuilder();
        for (ModeResult floor : results) {
            if (floor.mode != Mode.FLOOR || !floor.ok() || floor.latency == null) {
                continue;
            }
            for (ModeResult r : results) {
                if (r.mode == Mode.FLOOR || !r.ok() || r.consumers != floor.consumers || r.latency == null
                        || !kind(r).equals(kind(floor))) {
                    continue;
                }
                if (t.length() == 0) {
                    t.append("| mode | client | consumers | E2E P99 / floor's | worst fan-out max / floor's"
                            + " | broker CPU us/delivery / floor server's | clients CPU us/delivery / floor's |\n"
                            + "|---|---|---:|---:|---:|---:|---:|\n");
                }
                t.append(String.format(Locale.ROOT, "| %s | %s | %,d | %s | %s | %s | %s |%n", r.mode, kind(r),
                        r.consumers, ratio(r.latency.endToEnd.p99, floor.latency.endToEnd.p99),
                        ratio(r.latency.worstFanOut.max, floor.latency.worstFanOut.max),
                        r.broker == null || floor.broker == null ? NONE
                                : ratio(r.broker.cpuUsPerDelivery, floor.broker.cpuUsPerDelivery),
                        r.client == null || floor.client == null ? NONE
                                : ratio(r.client.cpuUsPerDelivery, floor.client.cpuUsPerDelivery)));
            }
        }
        return t.toString();
    }

    /** The topic move of each run that planned one; "" when none did. */
    static String moveTable(List<ModeResult> results) {
        StringBuilder t = new StringBuilder();
        for (ModeResult r : results) {
            ModeResult.Move m = r.move;
            if (m == null) {
                continue;
            }
            if (t.length() == 0) {
                t.append("| mode | consumers | moved at (s) | unload (or move command) done after (s)"
                        + " | everyone subscribed again after (s) | duplicates per consumer P50 / P99 / max"
                        + " | consumers with duplicates | lost |\n"
                        + "|---|---:|---:|---:|---:|---|---:|---:|\n");
            }
            Percentiles d = m.duplicatesPerConsumer;
            t.append(String.format(Locale.ROOT, "| %s | %,d | %s | %s | %s | %s | %,d | %s |%n", r.mode, r.consumers,
                    m.note != null ? m.note : Integer.toString(m.afterSeconds),
                    m.unloadSeconds == null ? (m.unloadError == null ? NONE : cell(m.unloadError))
                            : num(m.unloadSeconds) + (m.unloadError == null ? "" : " (" + cell(m.unloadError) + ")"),
                    m.allBackSeconds == null ? "not while publishing" : num(m.allBackSeconds),
                    d == null ? NONE : d.p50 + " / " + d.p99 + " / " + d.max, m.consumersWithDuplicates,
                    r.delivery == null ? NONE : String.format(Locale.ROOT, "%,d", r.delivery.lost)));
        }
        return t.toString();
    }

    /** Text for a Markdown table cell: a {@code |} in it would end the cell. */
    private static String cell(String text) {
        return text.replace("|", "\\|");
    }

    private static String ratio(double a, double b) {
        return b <= 0 ? NONE : String.format(Locale.ROOT, "%.1f x (%s / %s)", a / b, num(a), num(b));
    }
}
