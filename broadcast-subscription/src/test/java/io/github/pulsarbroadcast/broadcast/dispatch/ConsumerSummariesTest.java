package io.github.pulsarbroadcast.broadcast.dispatch;

import static org.testng.Assert.assertEquals;

import java.util.Arrays;
import java.util.Random;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.testng.annotations.Test;

/**
 * {@link ConsumerSummaries}: the quantiles against a sort, and a scrape served from the periodic sync's pass instead
 * of a pass of its own (issue 14: a scrape's cost must not grow with the consumers).
 */
public class ConsumerSummariesTest {

    @Test(groups = "unit", timeOut = 30_000)
    public void quantilesMatchASortedReference() {
        long seed = Long.getLong("broadcast.summaries.seed", System.nanoTime());
        Random rnd = new Random(seed);
        for (int round = 0; round < 3_000; round++) {
            int n = rnd.nextInt(300);
            long[] lags = new long[n + rnd.nextInt(3)];
            int distinct = 1 + rnd.nextInt(rnd.nextBoolean() ? 3 : 1_000);
            for (int i = 0; i < n; i++) {
                lags[i] = rnd.nextInt(distinct);
            }
            long[] sorted = Arrays.copyOf(lags, n);
            Arrays.sort(sorted);
            ConsumerSummaries.Summary s = ConsumerSummaries.Summary.of(lags, n, new int[5], 0);
            String at = "seed " + seed + " (-Dbroadcast.summaries.seed=" + seed + "), round " + round + ", n " + n;
            assertEquals(s.lagCount, n, at);
            assertEquals(s.lagMax, n == 0 ? 0 : sorted[n - 1], at + ": max");
            assertEquals(s.lagP99, n == 0 ? 0 : sorted[ConsumerSummaries.Summary.nearestRank(0.99, n)], at + ": P99");
            assertEquals(s.lagMedian, n == 0 ? 0 : sorted[ConsumerSummaries.Summary.nearestRank(0.5, n)],
                    at + ": median");
        }
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void nearestRankOfSmallCounts() {
        assertEquals(ConsumerSummaries.Summary.nearestRank(0.5, 4), 1, "median of {0, 0, 20, 20} is the 2nd: 0");
        assertEquals(ConsumerSummaries.Summary.nearestRank(0.99, 4), 3);
        assertEquals(ConsumerSummaries.Summary.nearestRank(0.5, 1), 0);
        assertEquals(ConsumerSummaries.Summary.nearestRank(0.99, 100), 98);
        assertEquals(ConsumerSummaries.Summary.nearestRank(0.99, 101), 99);
    }

    /**
     * A scrape after a sync shows the consumers as the sync saw them (a consumer that left since is still counted):
     * it made no pass of its own. One that finds no recent sync makes its own pass and shows the present.
     */
    @Test(groups = "unit", timeOut = 30_000)
    public void aScrapeReadsWhatTheLastSyncGathered() throws Exception {
        ModelHarness world = new ModelHarness();
        SubscriptionEngine engine = world.newEngine("persistent://t/ns/summary");
        java.util.List<BroadcastConsumer> connected = new java.util.ArrayList<>();
        for (int i = 0; i < 3; i++) {
            ModelHarness.Connection cnx = ModelHarness.discarding();
            connected.add(engine.join(i + 1, "car-" + i, cnx, InitialPosition.Latest, 0));
        }
        while (world.runOne()) {
            // the joins
        }
        assertEquals(connected(engine.snapshot(connected)), 3, "the first scrape makes its own pass");
        engine.sync();
        engine.leave(connected.remove(2));
        SubscriptionSnapshot afterLeave = engine.snapshot(connected);
        assertEquals(connected(afterLeave), 3, "read from the sync before the leave");
        assertEquals(afterLeave.lagCount(), 3);
        assertEquals(afterLeave.retained(), 1, "read live");
        engine.sync();
        assertEquals(connected(engine.snapshot(connected)), 2, "the next sync saw the leave");
        engine.leave(connected.remove(1));
        world.advance(3_001);
        assertEquals(connected(engine.snapshot(connected)), 1, "no sync for over 3 s: the scrape makes its own pass");
    }

    private static int connected(SubscriptionSnapshot s) {
        int n = 0;
        for (BroadcastConsumer.State state : BroadcastConsumer.State.values()) {
            n += state == BroadcastConsumer.State.REMOVED ? 0 : s.consumers(state);
        }
        return n;
    }
}
