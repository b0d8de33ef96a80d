package io.github.pulsarbroadcast.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
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

    static ModeResult.Connect connect(ConsumerTracker[] trackers, Fleet.Outcome outcome) {
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

    static ModeResult.Latency latency(LatencyRecorder rec) {
        ModeResult.Latency l = new ModeResult.Latency();
        l.endToEnd = rec.endToEnd();
        l.publishToBroker = rec.publishToBroker();
        l.brokerToConsumer = rec.brokerToConsumer();
        return l;
    }

    static ModeResult.Delivery delivery(BenchSettings s, ConsumerTracker[] trackers, Publisher publisher) {
        ModeResult.Delivery d = new ModeResult.Delivery();
        d.totalMessages = s.totalMessages();
        d.warmupMessages = s.warmupMessages();
        BitSet acked = publisher == null ? new BitSet() : publisher.acked();
        d.published = acked.cardinality();
        d.publishFailures = publisher == null ? 0 : publisher.failed();
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

    /**
     * This JVM's CPU seconds since {@code cpuNanosAtStart}, split at {@code cpuNanosAtConnected} (-1 when the
     * consumers never all connected: everything counts as connecting), and its heap now.
     */
    static ModeResult.ClientUsage client(long cpuNanosAtStart, long cpuNanosAtConnected) {
        ModeResult.ClientUsage u = new ModeResult.ClientUsage();
        long end = processCpuNanos();
        long connected = cpuNanosAtConnected < 0 ? end : cpuNanosAtConnected;
        u.cpuSecondsConnect = centiseconds((connected - cpuNanosAtStart) / 1e9);
        u.cpuSecondsRun = centiseconds((end - connected) / 1e9);
        u.cpuSeconds = centiseconds((end - cpuNanosAtStart) / 1e9);
        MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
        u.heapUsedBytes = heap.getUsed();
        u.heapMaxBytes = heap.getMax();
        return u;
    }

    /** {@code seconds} rounded to hundredths, as the reports give CPU times. */
    static double centiseconds(double seconds) {
        return Math.round(seconds * 100) / 100.0;
    }

    /** CPU time of this JVM in nanoseconds, or 0 where the platform does not tell. */
    static long processCpuNanos() {
        java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean) {
            return ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime();
        }
        return 0;
    }
}
