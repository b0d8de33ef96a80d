package io.github.pulsarbroadcast.bench;

import io.github.pulsarbroadcast.bench.core.Percentiles;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * results.md and the table printed at the end: one row per (mode, N), a backlog table when the backlog experiment
 * ran, the reasons of failed and skipped runs, notes, and the charts.
 *
 * <p>Threading: stateless; any thread.
 */
final class MarkdownReport {

    private static final String NONE = "–";

    private MarkdownReport() {
    }

    /** The whole document. {@code header} holds the run's description; {@code charts} the PNG file names. */
    static String document(Map<String, Object> header, BenchSettings s, List<ModeResult> results,
            List<String> charts) {
        StringBuilder md = new StringBuilder("# pulsar-broadcast bench\n\n");
        md.append("- command: `").append(header.get("command")).append("`\n");
        md.append("- started: ").append(header.get("startedAt"));
        if (header.get("finishedAt") != null) {
            md.append(", finished: ").append(header.get("finishedAt"));
        }
        md.append("\n- machine: ").append(header.get("machineSummary")).append('\n');
        md.append("- broker: ").append(header.get("brokerSummary")).append('\n');
        md.append(String.format(Locale.ROOT, "- workload: one producer, one topic, %s B messages at %s msg/s,"
                + " batching %s; %d s warm-up (%,d messages, not in the latency figures) + %d s measured (%,d"
                + " messages); receiver queue %d; %s%n", fmt(s.messageSize), trim(s.rate),
                s.batching ? "on" : "off", s.warmupSeconds, s.warmupMessages(), s.durationSeconds,
                s.totalMessages() - s.warmupMessages(), s.receiverQueue, clients(s)));
        md.append("\n## Results\n\n").append(table(results));
        md.append("\nLatency in ms: E2E = receive time minus the message's intended send time (the producer's"
                + " schedule, carried in the message; a producer running late cannot hide it); \"> x\" marks a"
                + " percentile that pairs never delivered (recorded as their age at the end) may have set;"
                + " publish→broker and broker→consumer split the latency from the producer's publish stamp at the"
                + " broker's publish timestamp; worst fan-out is, per measured message, the time until the last"
                + " consumer had it (P50 and max over messages). Connect times in s from the first subscribe request."
                + " delivered/lost/late/dup/out of order count (consumer, message) pairs, every consumer expecting"
                + " every published message; late ones arrived after the drain ended, within --late-grace. CPU per"
                + " delivery is user + system CPU over the measured window (first measured send to last delivery)"
                + " divided by the measured deliveries, idle baselines included (they are in the CPU table); the"
                + " broker JVM holds ZooKeeper and the bookie too (with the floor mode: the floor server); clients"
                + " are the consumers' processes: the fleet processes, or with the Java client the benchmark JVM,"
                + " which also holds the producer (with the fleet, the benchmark JVM's own CPU is in results.json)."
                + " Broker CPU per subscribe: the connect phase's. broker CPU (s) and clients CPU (s) span the first"
                + " subscribe to the end of the drain.\n");
        md.append("\n## CPU and baselines\n\n").append(SummaryTables.cpuTable(results));
        String threads = SummaryTables.threadTable(results);
        if (!threads.isEmpty()) {
            md.append("\n## The broker's CPU by thread\n\n").append(threads).append("\nCPU seconds of the broker"
                    + " JVM's threads by group, from /proc/<pid>/task (each thread's name, cut to 15 characters,"
                    + " chooses its group by prefix; docs/benchmarks.md lists them), over the measured window and"
                    + " the connect phase; in parentheses the share of the span's total. The broker JVM holds"
                    + " ZooKeeper and the bookie (\"storage and metadata\" holds their threads and the broker's"
                    + " clients of them); with the floor mode it is the floor"
                    + " server, whose floor-io threads count as event loops. \"threads that ended\" is the"
                    + " process's CPU that no group holds: what threads that ended used after the last reading that"
                    + " saw them.\n");
        }
        String stages = StageTable.markdown(results);
        if (!stages.isEmpty()) {
            md.append("\n## Where the time goes (broker stages, from the broker's metrics)\n\n").append(stages);
        }
        String spread = SummaryTables.repeatTable(results);
        if (!spread.isEmpty()) {
            md.append("\n## Repeated runs (--repeat): median and range\n\n").append(spread);
        }
        String capacity = SummaryTables.capacitySummary(results);
        if (!capacity.isEmpty()) {
            md.append("\n## Capacity: the highest sustained rate\n\n").append(capacity)
                    .append("\n").append(SummaryTables.capacitySteps(results))
                    .append("\nEach step's delivered share and latency are its own messages'; its CPU per delivery"
                            + " divides the CPU of its window (its first send to its last delivery) by every delivery"
                            + " in that window, an earlier step's late ones included. The broker-counted columns"
                            + " divide it by what the broker counted as delivered over the window"
                            + " (pulsar_broadcast_messages_delivered_total, interpolated between scrapes), which"
                            + " includes what was still in flight at the window's end (\"–\" without"
                            + " --metrics-interval).\n");
        }
        String floor = SummaryTables.floorTable(results);
        if (!floor.isEmpty()) {
            md.append("\n## Broker against the floor (same N, same client)\n\n").append(floor);
        }
        String backlog = backlogTable(results);
        if (!backlog.isEmpty()) {
            md.append("\n## Backlog: paused consumers catching up\n\n").append(backlog);
        }
        String move = SummaryTables.moveTable(results);
        if (!move.isEmpty()) {
            md.append("\n## Topic move: everyone reconnects and resumes\n\n").append(move);
        }
        String notes = notes(results);
        if (!notes.isEmpty()) {
            md.append("\n## Failures, skips and notes\n\n").append(notes);
        }
        if (!charts.isEmpty()) {
            md.append("\n## Charts\n\n");
            for (String c : charts) {
                md.append("![").append(c).append("](").append(c).append(")\n\n");
            }
        }
        return md.toString();
    }

    private static String clients(BenchSettings s) {
        if (!s.fleet()) {
            return String.format(Locale.ROOT, "stock Java client, %,d consumers per client", s.consumersPerClient);
        }
        return String.format(Locale.ROOT, "consumer fleet, %,d consumers per connection, lookup %s, %s acks flushed"
                + " %s", s.consumersPerConnection, s.lookup ? "on" : "off", s.ackCumulative ? "cumulative"
                : "individual", s.flushEveryAck ? "after each" : "once per read");
    }

    /** The main table. */
    static String table(List<ModeResult> results) {
        StringBuilder t = new StringBuilder();
        t.append("| mode | client | consumers | subs | status | all connected (s) | connected P50 / P99 (s)"
                + " | E2E P50 | P95 | P99 | P99.9 | max | worst fan-out P50 / max | publish→broker P99"
                + " | broker→consumer P99 | delivered | lost | late | dup | out of order | broker CPU us/delivery"
                + " | broker CPU us/subscribe | clients CPU us/delivery | broker CPU (s) | broker peak RSS (MiB)"
                + " | clients CPU (s) |\n");
        t.append("|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:"
                + "|---:|---:|---:|---:|---:|---:|\n");
        for (ModeResult r : results) {
            t.append("| ").append(r.mode).append(" | ").append(r.clientKind == null ? "java" : r.clientKind)
                    .append(" | ").append(fmt(r.consumers)).append(" | ").append(fmt(r.subscriptions)).append(" | ")
                    .append(status(r)).append(" | ").append(connectCells(r)).append(" | ").append(latencyCells(r))
                    .append(" | ").append(deliveryCells(r)).append(" | ").append(perUnitCells(r)).append(" | ")
                    .append(brokerCells(r)).append(" | ")
                    .append(r.client == null ? NONE : String.format(Locale.ROOT, "%.1f", r.client.cpuSeconds))
                    .append(" |\n");
        }
        return t.toString();
    }

    private static String status(ModeResult r) {
        boolean late = r.ok() && r.delivery != null && !r.delivery.scheduleKept;
        return late ? "ok, schedule missed" : r.status;
    }

    private static String perUnitCells(ModeResult r) {
        String broker = r.broker == null || r.window == null ? NONE : us(r.broker.cpuUsPerDelivery);
        String subscribe = r.broker == null || r.connect == null ? NONE : us(r.broker.cpuUsPerSubscribe);
        String clients = r.client == null || r.window == null ? NONE : us(r.client.cpuUsPerDelivery);
        return broker + " | " + subscribe + " | " + clients;
    }

    static String us(double v) {
        return String.format(Locale.ROOT, v >= 100 ? "%,.0f" : "%.1f", v);
    }

    private static String connectCells(ModeResult r) {
        if (r.connect == null) {
            return NONE + " | " + NONE;
        }
        String all = r.connect.allConnectedMs == null ? NONE : seconds(r.connect.allConnectedMs);
        Percentiles p = r.connect.connectedAtMs;
        return all + " | " + (p.count == 0 ? NONE : seconds(p.p50) + " / " + seconds(p.p99));
    }

    private static String latencyCells(ModeResult r) {
        Percentiles e = r.latency == null ? null : r.latency.endToEnd;
        if (e == null || e.count == 0) {
            return String.join(" | ", NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE);
        }
        long bound = r.latency.missingPairs > 0 ? r.latency.missingMinAgeMs : Long.MAX_VALUE;
        Percentiles w = r.latency.worstFanOut;
        String fanOut = w == null || w.count == 0 ? NONE : bounded(w.p50, bound) + " / " + bounded(w.max, bound);
        return String.join(" | ", bounded(e.p50, bound), bounded(e.p95, bound), bounded(e.p99, bound),
                bounded(e.p999, bound), bounded(e.max, bound), fanOut, p99(r.latency.publishToBroker),
                p99(r.latency.brokerToConsumer));
    }

    /** {@code v}, or "> v" when it is at or above the age of a missing pair (a lower bound then). */
    static String bounded(long v, long bound) {
        return (v >= bound ? "> " : "") + fmt(v);
    }

    private static String p99(Percentiles p) {
        return p == null || p.count == 0 ? NONE : fmt(p.p99);
    }

    private static String deliveryCells(ModeResult r) {
        ModeResult.Delivery d = r.delivery;
        if (d == null) {
            return String.join(" | ", NONE, NONE, NONE, NONE, NONE);
        }
        return String.join(" | ", fmt(d.delivered) + " (" + percent(d.delivered, d.expected) + ")", fmt(d.lost),
                fmt(d.arrivedLate), fmt(d.duplicated), fmt(d.outOfOrder));
    }

    private static String brokerCells(ModeResult r) {
        ModeResult.BrokerUsage b = r.broker;
        if (b == null) {
            return NONE + " | " + NONE;
        }
        return String.format(Locale.ROOT, "%.1f | %,d", b.cpuSeconds, b.peakRssBytes / (1024 * 1024));
    }

    /** The backlog table, or "" when no run paused consumers. */
    static String backlogTable(List<ModeResult> results) {
        StringBuilder t = new StringBuilder();
        for (ModeResult r : results) {
            ModeResult.Backlog b = r.backlog;
            if (b == null) {
                continue;
            }
            if (t.length() == 0) {
                t.append("| mode | consumers | paused | pause (s) | catch-up P50 / P99 / max (s) | not caught up"
                        + " | others' P99 before (ms) | during pause | during catch-up |\n");
                t.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
            }
            Percentiles c = b.catchUpMs;
            t.append("| ").append(r.mode).append(" | ").append(fmt(r.consumers)).append(" | ")
                    .append(fmt(b.pausedConsumers)).append(" | ").append(b.pauseSeconds).append(" | ")
                    .append(c.count == 0 ? NONE : seconds(c.p50) + " / " + seconds(c.p99) + " / " + seconds(c.max))
                    .append(" | ").append(fmt(b.notCaughtUp)).append(" | ").append(p99(b.othersBefore))
                    .append(" | ").append(p99(b.othersDuringPause)).append(" | ").append(p99(b.othersDuringCatchUp))
                    .append(" |\n");
        }
        return t.toString();
    }

    /** Reasons of failed and skipped runs and the runs' notes, as a list. */
    static String notes(List<ModeResult> results) {
        StringBuilder n = new StringBuilder();
        for (ModeResult r : results) {
            String who = r.mode + " at " + fmt(r.consumers) + " consumers";
            if (r.reason != null) {
                n.append("- **").append(who).append(" ").append(r.status).append("**: ").append(r.reason)
                        .append('\n');
            }
            for (String note : r.notes) {
                n.append("- ").append(who).append(": ").append(note).append('\n');
            }
        }
        return n.toString();
    }

    /** A one-line summary of a run for the console. */
    static String oneLine(ModeResult r) {
        StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "%s N=%,d: %s", r.mode, r.consumers,
                r.status));
        if (r.reason != null) {
            b.append(" (").append(r.reason).append(')');
        }
        if (r.connect != null && r.connect.allConnectedMs != null) {
            b.append(", all connected in ").append(seconds(r.connect.allConnectedMs)).append(" s");
        }
        if (r.latency != null && r.latency.endToEnd.count > 0) {
            b.append(", E2E P99 ").append(fmt(r.latency.endToEnd.p99)).append(" ms");
        }
        if (r.broker != null && r.window != null) {
            b.append(", broker ").append(us(r.broker.cpuUsPerDelivery)).append(" us/delivery");
        }
        if (r.client != null && r.window != null) {
            b.append(", clients ").append(us(r.client.cpuUsPerDelivery)).append(" us/delivery");
        }
        if (r.delivery != null) {
            b.append(", delivered ").append(percent(r.delivery.delivered, r.delivery.expected));
        }
        return b.toString();
    }

    static String fmt(long v) {
        return String.format(Locale.ROOT, "%,d", v);
    }

    static String seconds(long ms) {
        return String.format(Locale.ROOT, "%.1f", ms / 1000.0);
    }

    static String percent(long part, long whole) {
        if (whole == 0) {
            return NONE;
        }
        if (part == whole) {
            return "100%";
        }
        // Rounded down, so that 99.999% never shows as 100.00%.
        return String.format(Locale.ROOT, "%.2f%%", Math.floor(10_000.0 * part / whole) / 100);
    }

    static String trim(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
    }
}
