package io.github.pulsarbroadcast.bench.core;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.HdrHistogram.Histogram;
import org.testng.annotations.Test;

/**
 * The recorder's contract: every recorded value reaches the histogram it belongs to exactly once, whichever thread
 * recorded it and however often readers look in the meantime; a reader never sees more than was recorded; windows
 * and missing pairs land where they should.
 *
 * <p>Threading: the test thread, plus writer and reader threads in the concurrent case (joined before asserting).
 */
@Test(groups = "unit")
public class LatencyRecorderTest {

    private static final long NOW_MS = 1_000_000;

    @Test(timeOut = 10_000)
    public void eachValueLandsInItsHistogram() {
        LatencyRecorder r = new LatencyRecorder();
        long nowNanos = System.nanoTime();
        r.record(nowNanos, NOW_MS, nowNanos - 7_000_000, NOW_MS - 5, NOW_MS - 2, false);
        r.record(nowNanos, NOW_MS, 0, NOW_MS - 9, -1, false);
        assertEquals(r.endToEnd().count, 2);
        assertEquals(r.endToEnd().max, 9, "the publish time stands in when there is no intended send time");
        assertEquals(r.endToEndHistogram().getMinValue(), 7, "from the intended send time");
        assertEquals(r.fromPublish().count, 2);
        assertEquals(r.publishToBroker().count, 1, "only messages with a broker timestamp");
        assertEquals(r.publishToBroker().max, 3);
        assertEquals(r.brokerToConsumer().max, 2);
        assertEquals(r.deliveries(), 2);
    }

    @Test(timeOut = 10_000)
    public void windowsCountOnlyConsumersOutsideThePauseGroup() {
        LatencyRecorder r = new LatencyRecorder();
        long now = System.nanoTime();
        r.record(now, NOW_MS, now - 1_000_000, NOW_MS, -1, false);
        r.window(LatencyRecorder.PAUSE);
        r.record(now, NOW_MS, now - 4_000_000, NOW_MS, -1, false);
        r.record(now, NOW_MS, now - 6_000_000, NOW_MS, -1, true);
        r.window(LatencyRecorder.NONE);
        assertEquals(r.others(LatencyRecorder.BEFORE).count, 0);
        assertEquals(r.others(LatencyRecorder.PAUSE).count, 1);
        assertEquals(r.others(LatencyRecorder.PAUSE).max, 4);
        assertEquals(r.endToEnd().count, 3);
    }

    @Test(timeOut = 10_000)
    public void missingPairsAndResetAfterReads() {
        LatencyRecorder r = new LatencyRecorder();
        long now = System.nanoTime();
        r.record(now, NOW_MS, now - 3_000_000, NOW_MS, -1, false);
        assertEquals(r.liveP99(), 3);
        r.recordMissing(500, 4);
        assertEquals(r.endToEnd().count, 5);
        assertEquals(r.missing(), 4);
        assertEquals(r.missingMinAgeMs(), 500);
        r.reset();
        assertEquals(r.endToEnd().count, 0);
        r.record(now, NOW_MS, now - 3_000_000, NOW_MS, -1, false);
        assertEquals(r.endToEnd().count, 1, "the recorder keeps recording after a reset");
    }

    /**
     * Four writers record random values while a reader reads without pause; every value is counted once
     * (totals and a value-by-value comparison with a histogram each writer keeps for itself), and no read saw more
     * than was recorded by then. The seed is printed.
     */
    @Test(timeOut = 60_000)
    public void concurrentWritersAndReadersLoseAndDoubleNothing() throws Exception {
        long seed = System.nanoTime();
        System.out.println("LatencyRecorderTest seed " + seed);
        LatencyRecorder r = new LatencyRecorder();
        int writers = 4;
        int perWriter = 200_000;
        ExecutorService pool = Executors.newFixedThreadPool(writers + 1);
        try {
            CountDownLatch start = new CountDownLatch(1);
            AtomicBoolean writing = new AtomicBoolean(true);
            List<Future<Histogram>> expected = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                Random random = new Random(seed + w);
                expected.add(pool.submit(() -> write(r, random, perWriter, start)));
            }
            Future<Long> reads = pool.submit(() -> read(r, writing, (long) writers * perWriter));
            start.countDown();
            Histogram all = new Histogram(TimeUnit.HOURS.toMillis(1), 3);
            for (Future<Histogram> f : expected) {
                all.add(f.get());
            }
            writing.set(false);
            System.out.println("LatencyRecorderTest reads during the writes: " + reads.get()); // rethrows its failure
            assertEquals(r.deliveries(), (long) writers * perWriter, "seed " + seed);
            assertEquals(r.endToEndHistogram(), all, "seed " + seed);
        } finally {
            pool.shutdownNow();
        }
    }

    private static Histogram write(LatencyRecorder r, Random random, int count, CountDownLatch start)
            throws InterruptedException {
        Histogram mine = new Histogram(TimeUnit.HOURS.toMillis(1), 3);
        start.await();
        long now = System.nanoTime();
        for (int i = 0; i < count; i++) {
            long ms = random.nextInt(5_000);
            r.record(now, NOW_MS, now - TimeUnit.MILLISECONDS.toNanos(ms), NOW_MS, -1, false);
            mine.recordValue(ms);
        }
        return mine;
    }

    private static long read(LatencyRecorder r, AtomicBoolean writing, long total) {
        long reads = 0;
        do {
            long seen = r.deliveries();
            assertTrue(seen <= total, "read " + seen + " of " + total);
            r.liveP99();
            reads++;
        } while (writing.get());
        return reads;
    }
}
