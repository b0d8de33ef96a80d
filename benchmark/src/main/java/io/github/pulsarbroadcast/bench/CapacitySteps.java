package io.github.pulsarbroadcast.bench;

import io.github.pulsarbroadcast.bench.core.ConsumerTracker;
import io.github.pulsarbroadcast.bench.core.Deliveries;
import io.github.pulsarbroadcast.bench.core.FanOut;
import io.github.pulsarbroadcast.bench.core.Percentiles;
import io.github.pulsarbroadcast.bench.fleet.FleetState;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.IntToLongFunction;
import org.HdrHistogram.Histogram;
import org.apache.pulsar.client.api.Producer;

/**
 * The publishing phase of a capacity run: on the same connected consumers, one step per rate of
 * {@code --capacity-rates}, {@code --step-seconds} each, every step's messages numbered after the previous ones. After
 * each step's last send and a short settle, the step is judged on its own figures (its latency histogram is the
 * difference of the cumulative ones, its deliveries those of its own messages): it passes when its P99 stays within
 * {@code --capacity-p99}, at least 99% of its deliveries arrived and the producer kept its schedule. The first step
 * that fails ends the run; the highest that passed is the sustained capacity.
 *
 * <p>Threading: the main thread only.
 */
final class CapacitySteps {

    private final BenchSettings s;
    private final ConsumerTracker[] trackers;
    private final Deliveries deliveries;
    private final ConsumerSide side;
    private final RunMeter meter;
    private final HealthCheck health;
    private final BitSet ackedAll = new BitSet();
    private long firstSendNanos;
    private long lastDeliveryNanos;
    /** The fleet's state at the last step's end (null with the Java client). */
    private FleetState fleet;

    CapacitySteps(BenchSettings s, Deliveries deliveries, ConsumerSide side, RunMeter meter, HealthCheck health) {
        this.s = s;
        this.trackers = deliveries.trackers();
        this.deliveries = deliveries;
        this.side = side;
        this.meter = meter;
        this.health = health;
    }

    /** Every message the steps got acknowledged. */
    BitSet acked() {
        return (BitSet) ackedAll.clone();
    }

    long firstSendNanos() {
        return firstSendNanos;
    }

    /** The fleet's reconnects and errors over every step so far (null with the Java client). */
    FleetState fleet() {
        return fleet;
    }

    long lastDeliveryNanos() {
        return lastDeliveryNanos;
    }

    /** Runs the steps over {@code producer} until one fails; returns them in order. */
    List<ModeResult.CapacityStep> run(Producer<byte[]> producer, String label) throws Exception {
        List<ModeResult.CapacityStep> steps = new ArrayList<>();
        Histogram before = deliveries.latency().endToEndHistogram();
        int seq = 0;
        for (int k = 0; k < s.capacityRates.size(); k++) {
            double rate = s.capacityRates.get(k);
            int count = s.capacityStepMessages(k);
            System.err.printf(Locale.ROOT, "%s: step %d, %s msg/s for %d s%n", label, k + 1,
                    MarkdownReport.trim(rate), s.capacityStepSeconds);
            Publisher p = new Publisher(producer, false, s.messageSize, rate, seq, count, 0);
            ModeResult.CapacityStep step;
            try {
                step = publish(p, rate, count);
            } finally {
                p.close();
            }
            Histogram now = deliveries.latency().endToEndHistogram();
            Histogram own = now.copy();
            own.subtract(before);
            before = now;
            judge(step, withMissing(own, p, seq, count), seq, count);
            boolean fleetFailed = fleetFailed(step, steps, fleet == null ? null : fleet.firstError);
            steps.add(step);
            System.err.printf(Locale.ROOT, "%s: %,.0f deliveries/s, P99 %,d ms, %s%n", label,
                    step.deliveriesPerSecond, step.endToEnd.p99, step.passed ? "passed" : step.stoppedBecause);
            if (!step.passed) {
                if (s.capacityStepDownSeconds > 0 && !fleetFailed) {
                    steps.add(stepDown(producer, label, steps, before, seq + count));
                }
                break;
            }
            seq += count;
        }
        return steps;
    }

    /**
     * After the step that failed ({@code steps}' last), publishes again at the highest rate that passed (the first
     * rate when none did) for {@code --step-down-seconds}, and judges how long its latency took to return to that
     * step's level ({@link StepDown}).
     */
    private ModeResult.CapacityStep stepDown(Producer<byte[]> producer, String label,
                                             List<ModeResult.CapacityStep> steps, Histogram before, int seq)
            throws Exception {
        ModeResult.CapacityStep earlier = steps.stream().filter(c -> c.passed).reduce((a, b) -> b)
                .orElse(steps.get(0));
        int count = (int) Math.max(1, Math.round(earlier.rate * s.capacityStepDownSeconds));
        System.err.printf(Locale.ROOT, "%s: back down to %s msg/s for %d s%n", label,
                MarkdownReport.trim(earlier.rate), s.capacityStepDownSeconds);
        Publisher p = new Publisher(producer, false, s.messageSize, earlier.rate, seq, count, 0);
        ModeResult.CapacityStep step;
        Histogram own;
        try {
            step = publish(p, earlier.rate, count);
            Histogram arrived = deliveries.latency().endToEndHistogram();
            arrived.subtract(before);
            own = withMissing(arrived, p, seq, count);
            step.slices = StepDown.slices(deliveries.fanOut(), k -> p.intendedNanos(k) - p.startNanos(), p.acked(),
                    seq, count);
        } finally {
            p.close();
        }
        step.endToEnd = Percentiles.of(own);
        step.worstFanOut = deliveries.fanOut().worstDistribution(seq, seq + count);
        step.stepDown = true;
        step.recoveryLevelMs = StepDown.level(earlier.worstFanOut.p99);
        step.recoveredAfterSeconds = StepDown.recoveredAfter(step.slices, step.recoveryLevelMs);
        step.passed = step.recoveredAfterSeconds != null && step.delivered >= 0.99 * step.expected;
        step.stoppedBecause = step.passed ? null : step.recoveredAfterSeconds == null
                ? String.format(Locale.ROOT, "worst fan-out still above %,d ms at the end", step.recoveryLevelMs)
                : "deliveries fell behind";
        System.err.printf(Locale.ROOT, "%s: back down: worst fan-out back at or below %,d ms after %s s%n", label,
                step.recoveryLevelMs, step.recoveredAfterSeconds == null ? "never" : step.recoveredAfterSeconds);
        return step;
    }

    /**
     * A step in which the fleet reconnected or could not read entries fails, and the run stops there without a step
     * back down: from then on the figures measure the fleet's recovery (at 1 GiB of direct memory the fleet once ran
     * out past the sustainable rate and resubscribed hundreds of thousands of times, unreported).
     */
    static boolean fleetFailed(ModeResult.CapacityStep step, List<ModeResult.CapacityStep> earlier,
                               String firstError) {
        long before = earlier.isEmpty() ? 0 : earlier.get(earlier.size() - 1).fleetErrors;
        if (step.fleetErrors <= before) {
            return false;
        }
        step.passed = false;
        step.stoppedBecause = String.format(Locale.ROOT, "the fleet reconnected or failed to read %,d times (first"
                + " error: %s)", step.fleetErrors - before, firstError);
        return true;
    }

    /** Publishes one step, lets its deliveries settle and collects; returns the step's counts and CPU. */
    private ModeResult.CapacityStep publish(Publisher p, double rate, int count) throws Exception {
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(s.capacityStepSeconds + 30L);
        long receiptsBefore = side.firstReceipts();
        p.start();
        if (firstSendNanos == 0) {
            firstSendNanos = p.startNanos();
        }
        while (!p.done().isDone() && System.nanoTime() < giveUp) {
            health.check();
            Thread.sleep(100);
        }
        p.stop();
        BitSet acked = p.acked();
        ackedAll.or(acked);
        long expectedSoFar = (long) ackedAll.cardinality() * trackers.length;
        long settle = System.nanoTime() + TimeUnit.SECONDS.toNanos(s.capacitySettleSeconds);
        while (side.firstReceipts() < expectedSoFar && System.nanoTime() < settle) {
            health.check();
            Thread.sleep(50);
        }
        long stepEnd = Math.max(side.lastReceiptNanos(), p.lastSendNanos());
        long receiptsInWindow = side.firstReceipts() - receiptsBefore;
        lastDeliveryNanos = stepEnd;
        fleet = side.collect();
        ModeResult.CapacityStep step = new ModeResult.CapacityStep();
        step.fleetErrors = fleet == null ? 0 : fleet.reconnects + fleet.entryErrors;
        step.rate = rate;
        step.messages = count;
        ModeResult.Delivery d = ResultCollector.delivery(trackers, acked);
        step.expected = d.expected;
        step.delivered = d.delivered;
        step.sendLag = p.sendLag();
        step.scheduleKept = ResultCollector.scheduleKept(p.rejected(), step.sendLag, rate) && p.sent() == count;
        double seconds = Math.max(1e-9, (stepEnd - p.startNanos()) / 1e9);
        step.deliveriesPerSecond = Math.round(step.delivered / seconds);
        double broker = meter.cpuSeconds(CpuSampler.Group.BROKER, p.startNanos(), stepEnd);
        double clients = meter.cpuSeconds(CpuSampler.Group.CLIENTS, p.startNanos(), stepEnd);
        step.brokerCpuPerSecond = Math.round(broker / seconds * 1000) / 1000.0;
        step.brokerCpuSeconds = Math.round(broker * 1000) / 1000.0;
        step.windowFromNanos = p.startNanos();
        step.windowToNanos = stepEnd;
        // CPU per delivery divides by every delivery in the CPU window, earlier steps' late ones included: divided by
        // the step's own deliveries only, a step back down that drains the failed step's backlog looked more
        // expensive than it was.
        step.deliveredInWindow = receiptsInWindow;
        step.brokerCpuUsPerDelivery = perDelivery(broker, receiptsInWindow);
        step.clientsCpuUsPerDelivery = perDelivery(clients, receiptsInWindow);
        return step;
    }

    static double perDelivery(double seconds, long deliveries) {
        return deliveries <= 0 ? 0 : Math.round(seconds * 1e6 / deliveries * 10) / 10.0;
    }

    /**
     * {@code arrived} (the step's own latencies) with the step's pairs still missing at its end, each at its age then:
     * in a copy for the step's percentiles, and in the fan-out for its worst fan-out and a step down's slices. Without
     * them up to 1% of missing pairs (what "behind" allows) were left out of the step's P99 (a twenty-sixth session
     * review found it). Their later arrival is recorded again where it lands, as with a drain's missing pairs.
     */
    private Histogram withMissing(Histogram arrived, Publisher p, int firstSeq, int count) {
        return withMissing(arrived, p.acked(), p::intendedNanos, trackers, deliveries.fanOut(), firstSeq, count,
                System.nanoTime());
    }

    /** What {@link #withMissing(Histogram, Publisher, int, int)} does, on its parts (for tests). */
    static Histogram withMissing(Histogram arrived, BitSet acked, IntToLongFunction intendedNanos,
                                 ConsumerTracker[] trackers, FanOut fanOut, int firstSeq, int count, long nowNanos) {
        BitSet measured = (BitSet) acked.clone();
        measured.clear(0, firstSeq);
        measured.clear(firstSeq + count, Math.max(firstSeq + count, measured.length()));
        long[] missing = ResultCollector.missingPerSeq(trackers, measured);
        Histogram judged = arrived.copy();
        for (int seq = firstSeq; seq < missing.length; seq++) {
            if (missing[seq] > 0) {
                long age = Math.max(0, TimeUnit.NANOSECONDS.toMillis(nowNanos - intendedNanos.applyAsLong(seq)));
                judged.recordValueWithCount(Math.min(age, judged.getHighestTrackableValue()), missing[seq]);
                fanOut.recordMissing(seq, age);
            }
        }
        return judged;
    }

    /** Sets the step's latency figures and whether it passed. */
    private void judge(ModeResult.CapacityStep step, Histogram own, int firstSeq, int count) {
        step.endToEnd = Percentiles.of(own);
        step.worstFanOut = deliveries.fanOut().worstDistribution(firstSeq, firstSeq + count);
        boolean behind = step.delivered < 0.99 * step.expected;
        boolean slow = step.endToEnd.p99 > s.capacityP99Ms;
        step.passed = !behind && !slow && step.scheduleKept;
        if (!step.scheduleKept) {
            step.stoppedBecause = "the producer could not keep the schedule";
        } else if (behind) {
            step.stoppedBecause = String.format(Locale.ROOT, "deliveries fell behind (%s of the step's arrived within"
                    + " %d s of its last send)", MarkdownReport.percent(step.delivered, step.expected),
                    s.capacitySettleSeconds);
        } else if (slow) {
            step.stoppedBecause = String.format(Locale.ROOT, "P99 %,d ms passed %,d ms", step.endToEnd.p99,
                    s.capacityP99Ms);
        }
    }
}
