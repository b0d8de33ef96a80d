package io.github.pulsarbroadcast.bench;

import io.github.pulsarbroadcast.bench.core.ConsumerTracker;
import io.github.pulsarbroadcast.bench.core.Deliveries;
import io.github.pulsarbroadcast.bench.fleet.FleetState;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The end of a normal run, after the producer stopped: wait for every delivery (at most {@code --drain-timeout}, and
 * no longer than {@code --drain-idle} without one), snapshot, and when some are missing wait {@code --late-grace}
 * more and snapshot again, so that late arrivals and losses are told apart; then record the missing measured pairs
 * as their age and note what the run should know (a producer off its schedule, fleet reconnects).
 *
 * <p>Threading: the main thread only.
 */
final class Drain {

    private final BenchSettings s;
    private final int n;
    private final ConsumerTracker[] trackers;
    private final Deliveries deliveries;
    private final ConsumerSide side;
    private final ModeResult result;
    private final String label;
    private final HealthCheck health;
    private final Consumer<String> phases;

    Drain(BenchSettings s, Deliveries deliveries, ConsumerSide side, ModeResult result, String label,
            HealthCheck health, Consumer<String> phases) {
        this.s = s;
        this.trackers = deliveries.trackers();
        this.n = trackers.length;
        this.deliveries = deliveries;
        this.side = side;
        this.result = result;
        this.label = label;
        this.health = health;
        this.phases = phases;
    }

    /**
     * Waits for every delivery (the producer has stopped), snapshots, and when some are missing waits the late grace
     * and snapshots again; records the missing pairs as their age; {@code window} gets the measured window.
     */
    void run(MessageSource source, long[] window) throws Exception {
        phases.accept("draining");
        long drainStart = System.nanoTime();
        long expected = (long) source.acked().cardinality() * n;
        boolean complete = await(expected, s.drainTimeoutSeconds, s.drainIdleSeconds, "drain ");
        long drainEnd = System.nanoTime();
        FleetState fleet = side.collect();
        result.delivery = ResultCollector.delivery(s, trackers, source);
        long missingAtEnd = result.delivery.lost;
        if (missingAtEnd > 0 && s.lateGraceSeconds > 0) {
            phases.accept("late arrivals");
            await(expected, s.lateGraceSeconds, s.lateGraceSeconds, "late ");
            fleet = side.collect();
            result.delivery = ResultCollector.delivery(s, trackers, source);
        }
        result.delivery.drainMs = TimeUnit.NANOSECONDS.toMillis(drainEnd - source.lastSendNanos());
        result.delivery.drainCutShort = !complete;
        result.delivery.missingAtDrainEnd = missingAtEnd;
        result.delivery.arrivedLate = missingAtEnd - result.delivery.lost;
        window[0] = source.firstMeasuredSendNanos();
        window[1] = side.lastReceiptNanos();
        ResultCollector.recordMissing(deliveries, source, System.nanoTime());
        noteFleet(fleet);
        if (!complete) {
            result.notes.add(String.format("drain ended after %d s (--drain-timeout %d s, --drain-idle %d s) with"
                    + " %,d deliveries missing; %,d of them arrived within the next %d s (--late-grace)",
                    TimeUnit.NANOSECONDS.toSeconds(drainEnd - drainStart), s.drainTimeoutSeconds,
                    s.drainIdleSeconds, missingAtEnd, result.delivery.arrivedLate, s.lateGraceSeconds));
        }
        if (!result.delivery.scheduleKept) {
            result.notes.add(String.format("the producer did not keep its schedule (send lag P99 %,d ms, %d sends"
                    + " refused, %,d of %,d sent): the run is not valid at this rate", result.delivery.sendLag.p99,
                    result.delivery.rejectedSends, source.sent(), s.totalMessages()));
        }
    }

    /** Polls until {@code expected} deliveries, the deadline or {@code idleSeconds} without one; true if complete. */
    private boolean await(long expected, int timeoutSeconds, int idleSeconds, String what)
            throws Exception {
        long start = System.nanoTime();
        long deadline = start + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        long idle = TimeUnit.SECONDS.toNanos(idleSeconds);
        try (Progress bar = Progress.start(s.progress, what + label, expected)) {
            while (true) {
                long now = System.nanoTime();
                bar.stepTo(Math.min(expected, side.firstReceipts()));
                boolean complete = side.firstReceipts() >= expected && side.catchingUp() == 0;
                if (complete) {
                    return true;
                }
                if (now - Math.max(start, side.lastReceiptNanos()) > idle || now > deadline) {
                    return false;
                }
                health.check();
                Thread.sleep(50);
            }
        }
    }

    private void noteFleet(FleetState fleet) {
        noteFleet(s, result, fleet);
    }

    /**
     * Records the fleet's reconnects and unreadable entries; a run that did not move the topic and still saw them
     * fails (its consumers' side broke, so its figures are not the broker's).
     */
    static void noteFleet(BenchSettings s, ModeResult result, FleetState fleet) {
        if (fleet == null) {
            return;
        }
        result.client.reconnects = fleet.reconnects;
        result.client.entryErrors = fleet.entryErrors;
        if (fleet.reconnects > 0 || fleet.entryErrors > 0) {
            String what = String.format("the fleet reconnected %,d times and could not read %,d entries; first"
                    + " error: %s", fleet.reconnects, fleet.entryErrors, fleet.firstError);
            result.notes.add(what);
            if (s.moveTopicAfterSeconds <= 0) {
                // Nothing in the run moved the topic: the consumers' side failed (for example the fleet ran out of
                // direct memory), so the figures measure its recovery, not the broker.
                result.fail(what);
            }
        }
    }

}
