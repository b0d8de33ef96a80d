package io.github.pulsarbroadcast.broadcast.metrics;

import static org.testng.Assert.assertEquals;

import java.util.concurrent.TimeUnit;
import org.testng.annotations.Test;

/** The contracts of the latency histogram, the pass timing and the per-topic publish latencies. */
@Test(groups = "unit")
public class InstrumentsTest {

    private static long ms(double millis) {
        return (long) (millis * TimeUnit.MILLISECONDS.toNanos(1));
    }

    @Test(timeOut = 10_000)
    public void bucketsAreInclusiveUpperBoundsAndCumulative() {
        LatencyHistogram h = new LatencyHistogram();
        h.recordNanos(ms(0.5));   // le 0.5
        h.recordNanos(ms(0.51));  // le 1
        h.recordNanos(ms(5000));  // le 5000
        h.recordNanos(ms(5001));  // +Inf
        h.recordNanos(-3);        // counts as 0: le 0.5
        h.recordNanos(ms(10), 3); // three values of 10 ms
        LatencyHistogram.Snapshot s = h.snapshot();
        assertEquals(s.cumulative(0), 2);
        assertEquals(s.cumulative(1), 3);
        assertEquals(s.cumulative(3), 6, "le 10 holds the three 10 ms values");
        assertEquals(s.cumulative(LatencyHistogram.BOUNDS_MS.length - 1), 7);
        assertEquals(s.count(), 8);
        assertEquals(s.sumMs(), 0.5 + 0.51 + 5000 + 5001 + 30, 1e-6);
    }

    @Test(timeOut = 10_000)
    public void passTimingRecordsFirstAndLastWriteOncePerEntry() {
        LatencyHistogram first = new LatencyHistogram();
        LatencyHistogram last = new LatencyHistogram();
        PassTiming t = new PassTiming(0, 4, 3, first, last);
        t.written(ms(2));
        assertEquals(first.snapshot().count(), 4, "first write: once, weighted by the pass's 4 entries");
        t.abandoned();
        assertEquals(last.snapshot().count(), 0, "one connection still to write");
        t.written(ms(30));
        assertEquals(first.snapshot().count(), 4);
        assertEquals(last.snapshot().count(), 4);
        assertEquals(last.snapshot().sumMs(), 4 * 30.0, 1e-6);
    }

    /** operations.md: "A pass whose last connection closed before writing records no last-write time". */
    @Test(timeOut = 10_000)
    public void aPassWhoseLastConnectionClosedRecordsNoLastWrite() {
        LatencyHistogram first = new LatencyHistogram();
        LatencyHistogram last = new LatencyHistogram();
        PassTiming t = new PassTiming(0, 2, 2, first, last);
        t.written(ms(3));
        t.abandoned();
        assertEquals(first.snapshot().count(), 2);
        assertEquals(last.snapshot().count(), 0, "no last write: the last connection never wrote");
    }

    @Test(timeOut = 10_000)
    public void publishLatenciesLiveWhileATopicHasABroadcastSubscription() {
        PublishLatencies p = new PublishLatencies();
        p.record("t", ms(1)); // no subscription yet: not recorded
        LatencyHistogram a = p.register("t");
        LatencyHistogram b = p.register("t");
        assertEquals(a, b, "subscriptions of one topic share its histogram");
        p.record("t", ms(1));
        p.record("other", ms(1));
        assertEquals(a.snapshot().count(), 1);
        p.unregister("t");
        assertEquals(p.topics(), 1, "one subscription still open");
        p.unregister("t");
        assertEquals(p.topics(), 0);
        p.unregister("t"); // a second close of the same subscription is harmless
        assertEquals(p.topics(), 0);
    }
}
