package io.github.pulsarbroadcast.bench;

import io.github.pulsarbroadcast.bench.core.ConsumerTracker;
import io.github.pulsarbroadcast.bench.core.Deliveries;
import io.github.pulsarbroadcast.bench.core.FanOut;
import io.github.pulsarbroadcast.bench.core.LatencyRecorder;
import io.github.pulsarbroadcast.bench.core.Percentiles;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * Turns the raw state of a finished run (trackers, latency histograms, publisher) into the sections of a
 * {@link ModeResult}.
 *
 * <p>Threading: stateless; the main thread calls it once the run's listeners are quiet (late messages only make
 * the figures a little newer).
 */
final class ResultCollector {

    private static final int HISTOGRAM_BINS = 20;

    private ResultCollector() {
    }

    static ModeResult.Connect connect(ConsumerTracker[] trackers, ConsumerSide.Outcome outcome) {
        ModeResult.Connect c = new ModeResult.Connect();
        c.requested = trackers.length;
        c.connected = outcome.connected;
        c.failedToConnect = outcome.failed;
        c.firstError = outcome.firstError;
        Histogram at = new Histogram(3);
        Histogram own = new Histogram(3);
        long[] times = new long[trackers.length];
        int k = 0;
        for (ConsumerTracker t : trackers) {
            long ms = t.connectedAtMs();
            if (ms >= 0) {
                at.recordValue(ms);
                own.recordValue(Math.max(0, t.subscribeMs()));
                times[k++] = ms;
            }
        }
        c.connectedAtMs = Percentiles.of(at);
        c.subscribeMs = Percentiles.of(own);
        if (outcome.connected == trackers.length) {
            c.allConnectedMs = at.getMaxValue();
        }
        c.histogram = bins(times, k);
        return c;
    }

    /** {@code n} values in {@value #HISTOGRAM_BINS} or fewer bins of a round width (1, 2 or 5 x 10^k ms). */
    static List<ModeResult.Bin> bins(long[] values, int n) {
        List<ModeResult.Bin> bins = new ArrayList<>();
        if (n == 0) {
            return bins;
        }
        long max = 0;
        for (int i = 0; i < n; i++) {
            max = Math.max(max, values[i]);
        }
        long width = niceWidth((max + 1 + HISTOGRAM_BINS - 1) / HISTOGRAM_BINS);
        int count = (int) (max / width) + 1;
        long[] counts = new long[count];
        for (int i = 0; i < n; i++) {
            counts[(int) (values[i] / width)]++;
        }
        for (int b = 0; b < count; b++) {
            bins.add(new ModeResult.Bin(b * width, (b + 1) * width, counts[b]));
        }
        return bins;
    }

    private static long niceWidth(long atLeast) {
        long step = 1;
        while (true) {
            for (long m : new long[] {1, 2, 5}) {
                if (m * step >= atLeast) {
                    return m * step;
                }
            }
            step *= 10;
        }
    }

    /**
     * The latency section: the histograms of {@code d}, the per-message worst fan-out over the measured messages
     * and the latency over the run (per measured message: its intended send time from the first measured one, its
     * worst and mean latency).
     */
    static ModeResult.Latency latency(Deliveries d, MessageSource source, int warmup, int total) {
        LatencyRecorder rec = d.latency();
        ModeResult.Latency l = new ModeResult.Latency();
        l.endToEnd = rec.endToEnd();
        l.fromPublish = rec.fromPublish();
        l.publishToBroker = rec.publishToBroker();
        l.brokerToConsumer = rec.brokerToConsumer();
        l.missingPairs = rec.missing();
        l.missingMinAgeMs = rec.missingMinAgeMs();
        FanOut f = d.fanOut();
        l.worstFanOut = f.worstDistribution(warmup, total);
        if (source != null) {
            long first = source.intendedNanos(warmup);
            for (int seq = warmup; seq < Math.min(total, source.sent()); seq++) {
                l.overRun.add(new double[] {centiseconds((source.intendedNanos(seq) - first) / 1e9), f.worstMs(seq),
                    Math.round(f.meanMs(seq) * 10) / 10.0});
            }
        }
        return l;
    }

    /**
     * Records every measured (consumer, message) pair that never arrived as its age at {@code nowNanos} in the
     * latency histogram and the fan-out, so that missing pairs weigh on the tail.
     */
    static void recordMissing(Deliveries d, MessageSource source, long nowNanos) {
        BitSet measured = source.acked();
        measured.clear(0, Math.min(d.measuredFromSeq(), measured.length()));
        long[] missing = missingPerSeq(d.trackers(), measured);
        for (int seq = 0; seq < missing.length; seq++) {
            if (missing[seq] > 0) {
                long age = TimeUnit.NANOSECONDS.toMillis(nowNanos - source.intendedNanos(seq));
                d.latency().recordMissing(age, missing[seq]);
                d.fanOut().recordMissing(seq, age);
            }
        }
    }

    /** For each sequence number of {@code measured}, how many of {@code trackers}' consumers have not received it. */
    static long[] missingPerSeq(ConsumerTracker[] trackers, BitSet measured) {
        long[] missing = new long[Math.max(0, measured.length())];
        for (ConsumerTracker t : trackers) {
            BitSet m = t.missing(measured);
            for (int seq = m.nextSetBit(0); seq >= 0; seq = m.nextSetBit(seq + 1)) {
                missing[seq]++;
            }
        }
        return missing;
    }

    static ModeResult.Delivery delivery(BenchSettings s, ConsumerTracker[] trackers, MessageSource publisher) {
        ModeResult.Delivery d = delivery(trackers, publisher == null ? new BitSet() : publisher.acked());
        d.totalMessages = s.totalMessages();
        d.warmupMessages = s.warmupMessages();
        d.publishFailures = publisher == null ? 0 : publisher.failed();
        if (publisher != null) {
            d.rejectedSends = publisher.rejected();
            d.sendLag = publisher.sendLag();
            int measured = publisher.sent() - s.warmupMessages();
            double span = (publisher.lastSendNanos() - publisher.firstMeasuredSendNanos()) / 1e9;
            d.achievedRate = measured > 1 && span > 0 ? Math.round((measured - 1) / span * 1000) / 1000.0 : 0;
            d.scheduleKept = scheduleKept(d.rejectedSends, d.sendLag, s.rate)
                    && publisher.sent() == d.totalMessages;
        }
        return d;
    }

    /**
     * True when no send was refused and 99% of them ran less than a period ({@code 1 / rate}) or 50 ms late,
     * whichever is longer (scheduling jitter of a few ms on a busy machine is not a producer falling behind).
     */
    static boolean scheduleKept(int rejected, Percentiles sendLag, double rate) {
        return rejected == 0 && sendLag.p99 <= Math.max(50, 1_000 / rate);
    }

    /** The counts of every consumer's receipts among {@code acked} (each tracker settles on it). */
    static ModeResult.Delivery delivery(ConsumerTracker[] trackers, BitSet acked) {
        ModeResult.Delivery d = new ModeResult.Delivery();
        d.published = acked.cardinality();
        d.minDeliveredPerConsumer = trackers.length == 0 ? 0 : Long.MAX_VALUE;
        for (ConsumerTracker t : trackers) {
            long got = t.settle(acked);
            long dup = t.duplicates();
            long ooo = t.outOfOrder();
            d.delivered += got;
            d.lost += d.published - got;
            d.duplicated += dup;
            d.outOfOrder += ooo;
            d.consumersComplete += got == d.published ? 1 : 0;
            d.consumersWithLoss += got < d.published ? 1 : 0;
            d.consumersWithDuplicates += dup > 0 ? 1 : 0;
            d.consumersOutOfOrder += ooo > 0 ? 1 : 0;
            d.minDeliveredPerConsumer = Math.min(d.minDeliveredPerConsumer, got);
        }
        d.expected = (long) d.published * trackers.length;
        return d;
    }

    static ModeResult.Backlog backlog(BenchSettings s, ConsumerTracker[] trackers, LatencyRecorder rec) {
        ModeResult.Backlog b = new ModeResult.Backlog();
        b.pauseSeconds = s.pauseSeconds;
        b.pauseAfterSeconds = s.pauseAfterSeconds;
        Histogram catchUp = new Histogram(3);
        for (ConsumerTracker t : trackers) {
            if (t.pauseGroup()) {
                b.pausedConsumers++;
                long ms = t.catchUpMs();
                if (ms >= 0) {
                    catchUp.recordValue(ms);
                } else {
                    b.notCaughtUp++;
                }
            }
        }
        b.catchUpMs = Percentiles.of(catchUp);
        b.othersBefore = rec.others(LatencyRecorder.BEFORE);
        b.othersDuringPause = rec.others(LatencyRecorder.PAUSE);
        b.othersDuringCatchUp = rec.others(LatencyRecorder.CATCH_UP);
        return b;
    }

    /** {@code u} (a new one when null) with this JVM's heap now. */
    static ModeResult.ClientUsage client(ModeResult.ClientUsage u) {
        ModeResult.ClientUsage c = u == null ? new ModeResult.ClientUsage() : u;
        MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
        c.heapUsedBytes = heap.getUsed();
        c.heapMaxBytes = heap.getMax();
        return c;
    }

    /** {@code seconds} rounded to hundredths, as the reports give CPU times. */
    static double centiseconds(double seconds) {
        return Math.round(seconds * 100) / 100.0;
    }
}
