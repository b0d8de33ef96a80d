package io.github.pulsarbroadcast.bench;

import io.github.pulsarbroadcast.bench.core.Mode;
import java.io.IOException;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.apache.pulsar.client.admin.PulsarAdmin;

/**
 * Runs every mode at every N, one after the other, smallest N first, {@code --repeat} times (each repetition starts
 * the modes one further along, so that no mode is always first after a broker start): starts (and restarts) the
 * broker JVM as the settings ask (the floor server instead for the floor mode), skips what cannot run (broadcast
 * modes on a stock broker; a mode at larger N once it failed at a smaller one), and rewrites results.json and
 * results.md after every run so that a crash loses nothing finished.
 *
 * <p>Threading: the main thread only.
 */
final class BenchRunner {

    private final BenchSettings s;
    private final ReportWriter report;
    private final String runId = LocalDateTime.now().format(DateTimeFormatter.ofPattern("HHmmss"));
    private final Map<Mode, Integer> failedAt = new EnumMap<>(Mode.class);
    private Broker broker;
    private PulsarAdmin admin;
    private int brokersStarted;
    private int runs;
    /** Measured runs the current broker has served; 0 when it is new. */
    private int runsOnBroker;

    BenchRunner(BenchSettings s, ReportWriter report) {
        this.s = s;
        this.report = report;
    }

    List<ModeResult> run() throws IOException {
        List<ModeResult> results = new ArrayList<>();
        List<Integer> sizes = new ArrayList<>(s.consumers);
        sizes.sort(null);
        int total = sizes.size() * s.modes.size() * s.repeat;
        try {
            for (int n : sizes) {
                for (int k = 0; k < s.repeat; k++) {
                    for (int m = 0; m < s.modes.size(); m++) {
                        Mode mode = s.modes.get((m + k) % s.modes.size());
                        ModeResult r = runOne(mode, n);
                        r.repeat = k;
                        results.add(r);
                        report.writeResults(results);
                        System.err.printf("[%d/%d] %s%n", results.size(), total, MarkdownReport.oneLine(r));
                    }
                }
            }
        } finally {
            stopBroker();
        }
        return results;
    }

    private ModeResult runOne(Mode mode, int n) throws IOException {
        int subscriptions = mode.subscriptions(n, s.splitSubscriptions);
        if (mode.needsPlugin() && s.broker == BenchSettings.BrokerKind.STOCK) {
            return ModeResult.skipped(mode, n, subscriptions, "needs the broadcast plugin; --broker stock runs a"
                    + " broker without it");
        }
        if (!mode.needsPlugin() && mode != Mode.FLOOR && s.stockMaxConsumers > 0 && n > s.stockMaxConsumers) {
            return ModeResult.skipped(mode, n, subscriptions, String.format("modes without the plugin run up to %,d"
                    + " consumers here (--stock-max-consumers)", s.stockMaxConsumers));
        }
        Integer failed = failedAt.get(mode);
        if (failed != null && s.skipAfterFailure) {
            return ModeResult.skipped(mode, n, subscriptions, String.format("failed at %,d consumers"
                    + " (--no-skip-after-failure tries anyway)", failed));
        }
        runs++;
        try {
            prepareBroker(mode, n);
        } catch (IOException e) {
            ModeResult r = new ModeResult(mode, n, subscriptions);
            r.fail("the broker did not start: " + Errors.brief(e));
            failedAt.put(mode, n);
            return r;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while starting the broker", e);
        }
        boolean fresh = mode == Mode.FLOOR || (s.freshBroker && s.forkedBroker());
        ModeRun run = new ModeRun(s, mode, n, broker, admin, fresh, runId + "-" + runs);
        ModeResult r = run.run();
        noteWarmBroker(r);
        report.writeConsumers(r, run.trackers());
        report.writeMetrics(r, run.metrics());
        if (mode == Mode.FLOOR) {
            stopBroker(); // the floor server served this run only
        }
        if (!r.ok()) {
            failedAt.putIfAbsent(mode, n);
            if (s.forkedBroker()) {
                stopBroker(); // whatever went wrong, the next run gets a clean broker
            }
        }
        return r;
    }

    /** Records how many measured runs the broker served before {@code r}, with a note when it was not fresh. */
    private void noteWarmBroker(ModeResult r) {
        r.brokerRunsBefore = runsOnBroker++;
        if (r.brokerRunsBefore > 0) {
            r.notes.add(String.format("the broker JVM had served %d measured run(s) of this benchmark before this one"
                    + " (%s): its JIT and heap were warm (at 100,000 consumers a fresh broker's connect phase cost about"
                    + " twice the CPU: docs/benchmarks.md, \"A connect storm on a warm broker\")", r.brokerRunsBefore,
                    s.forkedBroker() ? "--no-fresh-broker" : "an external broker"));
        }
    }

    /** A running, primed broker for the next run: a new one when asked for (or when the last one died). */
    private void prepareBroker(Mode mode, int n) throws IOException, InterruptedException {
        if (mode == Mode.FLOOR) {
            stopBroker();
            brokersStarted++;
            runsOnBroker = 0;
            System.err.printf("Starting the floor server (no broker) for %,d consumers%n", n);
            broker = FloorBroker.start(s, brokersStarted);
            return;
        }
        if (broker instanceof FloorBroker
                || (s.forkedBroker() && (s.freshBroker || broker == null || !broker.alive()))) {
            stopBroker();
        }
        ensureBroker();
        prime(mode, n);
    }

    /** The unreported warm-up run of {@code mode} before the measured one ({@link BenchSettings#primeConsumers}). */
    private void prime(Mode mode, int n) throws IOException, InterruptedException {
        int k = Math.min(n, s.primeConsumers);
        if (k <= 0) {
            return;
        }
        long t0 = System.nanoTime();
        ModeResult r = new ModeRun(s.forPriming(k), mode, k, broker, admin, false, runId + "-" + runs + "-prime")
                .run();
        if (r.ok()) {
            System.err.printf("Warm-up run of %s with %,d consumers done in %.1f s%n", mode, k,
                    (System.nanoTime() - t0) / 1e9);
            return;
        }
        System.err.println("warning: the warm-up run of " + mode + " failed: " + r.reason);
        if (s.forkedBroker()) {
            stopBroker(); // the measured run gets a clean broker (primed the basic way only)
            ensureBroker();
        }
    }

    private void ensureBroker() throws IOException, InterruptedException {
        if (broker != null) {
            return;
        }
        runsOnBroker = 0;
        if (s.forkedBroker()) {
            brokersStarted++;
            System.err.printf("Starting the broker JVM (%s, max heap %s, direct memory %s); log: %s%n",
                    s.broker == BenchSettings.BrokerKind.PLUGIN ? "with the plugin" : "stock, no plugin",
                    s.brokerHeap, s.brokerDirectMemory, s.out.resolve("broker-" + brokersStarted + ".log"));
            long t0 = System.nanoTime();
            broker = ForkedBroker.start(s, brokersStarted);
            System.err.printf("Broker up in %.1f s at %s%n", (System.nanoTime() - t0) / 1e9, broker.serviceUrl());
        } else {
            broker = new ExternalBroker(s.serviceUrl, s.adminUrl, s.brokerPid);
        }
        admin = PulsarAdmin.builder().serviceHttpUrl(broker.adminUrl()).build();
        if (s.forkedBroker()) {
            long t0 = System.nanoTime();
            String problem = BrokerPrimer.prime(broker, admin, s);
            if (problem != null) {
                System.err.println("warning: priming the new broker failed: " + problem);
            } else {
                System.err.printf("Broker primed in %.1f s%n", (System.nanoTime() - t0) / 1e9);
            }
        }
    }

    private void stopBroker() {
        if (admin != null) {
            admin.close();
            admin = null;
        }
        if (broker != null) {
            broker.close();
            broker = null;
        }
    }
}
