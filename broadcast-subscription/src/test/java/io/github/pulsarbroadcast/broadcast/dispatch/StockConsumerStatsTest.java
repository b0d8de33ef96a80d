package io.github.pulsarbroadcast.broadcast.dispatch;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertSame;
import static org.testng.Assert.assertTrue;
import static org.testng.Assert.expectThrows;

import java.util.ArrayList;
import java.util.List;
import org.apache.pulsar.common.policies.data.stats.ConsumerStatsImpl;
import org.apache.pulsar.common.policies.data.stats.SubscriptionStatsImpl;
import org.testng.annotations.Test;

/**
 * {@link StockConsumerStats} apart from a broker: the list the stock aggregator walks (one element per consumer, the
 * totals once), the per-thread hiding of the consumer list, and the caller check (which finds the stock aggregator
 * by class name only). The figures on a real broker: {@code BroadcastMetricsTest}.
 */
public class StockConsumerStatsTest {

    @Test(groups = "unit", timeOut = 30_000)
    public void theListCountsEveryConsumerAndCarriesTheTotalsOnce() {
        ConsumerStatsImpl totals = new ConsumerStatsImpl();
        totals.msgRateOut = 7.5;
        ConsumerStatsImpl zeros = new ConsumerStatsImpl();
        StockConsumerStats.TotalsList list = new StockConsumerStats.TotalsList(4, totals, zeros);
        List<ConsumerStatsImpl> walked = new ArrayList<>();
        list.forEach(walked::add);
        assertEquals(walked.size(), 4);
        assertEquals(walked.stream().mapToDouble(c -> c.msgRateOut).sum(), 7.5);
        assertSame(list.get(0), totals);
        assertSame(list.get(3), zeros);
        assertEquals(new ArrayList<>(list), walked, "iteration and forEach agree");
        expectThrows(IndexOutOfBoundsException.class, () -> list.get(4));
        new StockConsumerStats.TotalsList(0, totals, zeros).forEach(c -> {
            throw new AssertionError("no consumers, no element");
        });
    }

    @Test(groups = "unit", timeOut = 30_000)
    public void beforeAnyPassTheTotalsAreZeroAndTheCountIsLive() {
        SubscriptionStatsImpl stats = new SubscriptionStatsImpl();
        stats.msgOutCounter = 3; // what stock counted of departed consumers
        new StockConsumerStats().applyTotals(stats, 2);
        assertEquals(stats.consumers.size(), 2);
        assertEquals(stats.msgOutCounter, 3, "a counter never goes below what stock had");
        assertEquals(stats.msgRateOut, 0.0);
    }

    /**
     * Regression (found by review): with no consumer left, the counters were left at stock's departed-consumer part,
     * which misses a copy made after stock took a leaving consumer's counters, while with consumers connected they
     * were the running totals: the exported counter went back when the last consumer left.
     */
    @Test(groups = "unit", timeOut = 30_000)
    public void countersAreTheRunningTotalsAlsoWithNoConsumerLeft() {
        StockConsumerStats totals = new StockConsumerStats();
        totals.countCopied(50, 500);
        for (int consumers : new int[] {3, 0}) {
            SubscriptionStatsImpl stats = new SubscriptionStatsImpl();
            stats.msgOutCounter = 40; // what stock took of the departed consumers
            stats.bytesOutCounter = 400;
            totals.applyTotals(stats, consumers);
            assertEquals(stats.msgOutCounter, 50, consumers + " consumers");
            assertEquals(stats.bytesOutCounter, 500, consumers + " consumers");
            assertEquals(stats.consumers.size(), consumers);
        }
    }

    @Test(groups = "unit", timeOut = 30_000)
    public void theConsumerListIsHiddenOnlyInsideTheCallAndOnlyOnItsThread() throws Exception {
        assertFalse(StockConsumerStats.hidingConsumerList());
        boolean[] other = new boolean[1];
        boolean inside = StockConsumerStats.withoutConsumerList(() -> {
            Thread t = new Thread(() -> other[0] = StockConsumerStats.hidingConsumerList());
            t.start();
            try {
                t.join();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            return StockConsumerStats.hidingConsumerList();
        });
        assertTrue(inside);
        assertFalse(other[0], "another thread still sees the consumers");
        assertFalse(StockConsumerStats.hidingConsumerList());
        expectThrows(IllegalStateException.class, () -> StockConsumerStats.withoutConsumerList(() -> {
            throw new IllegalStateException("stock failed");
        }));
        assertFalse(StockConsumerStats.hidingConsumerList(), "hidden no longer after a failure");
        StockConsumerStats.withoutConsumerList(() -> StockConsumerStats.withoutConsumerList(() -> null));
        assertFalse(StockConsumerStats.hidingConsumerList(), "nested calls");
        assertTrue(StockConsumerStats.withoutConsumerList(() -> {
            StockConsumerStats.withoutConsumerList(() -> null);
            return StockConsumerStats.hidingConsumerList();
        }), "an inner call leaves the outer one hidden");
    }

    @Test(groups = "unit", timeOut = 30_000)
    public void onlyTheStockAggregatorIsRecognised() {
        assertFalse(StockConsumerStats.calledByStockAggregator(), "a test is not the aggregator");
        assertEquals(StockConsumerStats.STOCK_AGGREGATOR,
                org.apache.pulsar.broker.stats.prometheus.NamespaceStatsAggregator.class.getName(),
                "the class the check looks for exists under that name in this Pulsar version");
    }
}
