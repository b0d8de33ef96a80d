package io.github.pulsarbroadcast.bench.core;

import static org.testng.Assert.assertEquals;

import org.testng.annotations.Test;

/**
 * The CPU window of a run starts with the first measured send; warm-up messages delivered after it cost CPU inside
 * the window, so they count among its deliveries ({@link Deliveries#warmupReceiptsInWindow}). Regression (twenty-sixth
 * session's review): the window's CPU was divided by the measured deliveries only, which overstated CPU per delivery
 * whenever the consumers lagged by more than a period.
 *
 * <p>Threading: the test thread only.
 */
@Test(groups = "unit")
public class WarmupInWindowTest {

    private static final long PERIOD = 1_000_000_000L;

    @Test(timeOut = 10_000)
    public void warmUpReceiptsAfterTheFirstMeasuredSendAreCounted() {
        ConsumerTracker[] trackers = {new ConsumerTracker(0, null, false), new ConsumerTracker(1, null, false)};
        Deliveries d = new Deliveries(trackers, 10, 20, PERIOD);
        long start = 1_000_000_000_000L; // intended time of message 0; message 10 (the first measured) at +10 s
        receive(d, trackers[0], 9, start, start + 9 * PERIOD + PERIOD / 2); // before message 10's time: not counted
        receive(d, trackers[1], 9, start, start + 10 * PERIOD + 1); // after it: counted
        receive(d, trackers[1], 5, start, start + 10 * PERIOD); // at it, five periods late: counted
        receive(d, trackers[1], 5, start, start + 11 * PERIOD); // a duplicate: not counted again
        receive(d, trackers[0], 10, start, start + 10 * PERIOD + PERIOD / 10); // measured: in the latencies instead
        assertEquals(d.warmupReceiptsInWindow(), 2);
        assertEquals(d.latency().deliveries(), 1);

        Deliveries noPeriod = new Deliveries(new ConsumerTracker[] {new ConsumerTracker(0, null, false)}, 10, 20);
        receive(noPeriod, noPeriod.trackers()[0], 9, start, start + 20 * PERIOD);
        assertEquals(noPeriod.warmupReceiptsInWindow(), 0, "no period (a capacity run): nothing counted");
    }

    private static void receive(Deliveries d, ConsumerTracker t, int seq, long start, long nowNanos) {
        d.onMessage(t, seq, nowNanos, nowNanos / 1_000_000, start + seq * PERIOD, 0, -1);
    }
}
