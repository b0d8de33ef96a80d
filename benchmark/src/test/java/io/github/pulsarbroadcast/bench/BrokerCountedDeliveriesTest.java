package io.github.pulsarbroadcast.bench;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;

import io.github.pulsarbroadcast.bench.metrics.MetricsSeries;
import java.util.List;
import org.testng.annotations.Test;

/**
 * {@link BrokerCountedDeliveries}: a capacity step's deliveries by the broker's own counter, summed over the topic's
 * subscriptions and interpolated between scrapes.
 *
 * <p>Threading: TestNG's test thread.
 */
@Test(groups = "unit")
public class BrokerCountedDeliveriesTest {

    private static final String A = BrokerCountedDeliveries.DELIVERED + "{subscription=\"a\"}";
    private static final String B = BrokerCountedDeliveries.DELIVERED + "{subscription=\"b\"}";

    /** Scrapes every 5 s; subscription a counts 1,000 per second, b 500, both from 0 at t = 0. */
    private static MetricsSeries series(int scrapes) {
        MetricsSeries s = new MetricsSeries();
        for (int i = 0; i < scrapes; i++) {
            MetricsSeries.Scrape scrape = new MetricsSeries.Scrape();
            scrape.t = 5.0 * i;
            scrape.values.put(A, 5_000.0 * i);
            scrape.values.put(B, 2_500.0 * i);
            s.scrapes.add(scrape);
        }
        return s;
    }

    /** A step from {@code from} to {@code to} seconds (nanoTime = seconds x 1e9 on a clock starting at 0). */
    private static ModeResult.CapacityStep step(double from, double to, double cpuSeconds) {
        ModeResult.CapacityStep step = new ModeResult.CapacityStep();
        step.windowFromNanos = (long) (from * 1e9);
        step.windowToNanos = (long) (to * 1e9);
        step.brokerCpuSeconds = cpuSeconds;
        return step;
    }

    @Test(timeOut = 10_000)
    public void countsEverySubscriptionOverTheWindowInterpolatedBetweenScrapes() {
        ModeResult.CapacityStep inside = step(2.5, 12.5, 0.03);
        ModeResult.CapacityStep onScrapes = step(5, 15, 0.015);
        BrokerCountedDeliveries.fill(List.of(inside, onScrapes), series(4), n -> n / 1e9);
        assertEquals(inside.brokerDeliveredInWindow, 15_000, "10 s at 1,500 per second");
        assertEquals(inside.brokerCpuUsPerBrokerDelivery, 2.0, 1e-9, "0.03 s / 15,000");
        assertEquals(onScrapes.brokerDeliveredInWindow, 15_000);
        assertEquals(onScrapes.brokerCpuUsPerBrokerDelivery, 1.0, 1e-9);
    }

    @Test(timeOut = 10_000)
    public void aWindowBeyondTheScrapesOrWithoutTheCounterStaysUnknown() {
        ModeResult.CapacityStep late = step(10, 20, 1);
        BrokerCountedDeliveries.fill(List.of(late), series(4), n -> n / 1e9);
        assertEquals(late.brokerDeliveredInWindow, -1, "the last scrape is at 15 s");
        assertEquals(late.brokerCpuUsPerBrokerDelivery, 0.0);
        ModeResult.CapacityStep none = step(0, 5, 1);
        BrokerCountedDeliveries.fill(List.of(none), new MetricsSeries(), n -> n / 1e9);
        assertEquals(none.brokerDeliveredInWindow, -1);
    }

    @Test(timeOut = 10_000)
    public void oneSubscriptionMissingAtAnEdgeGivesNoFigureRatherThanAPartialSum() {
        MetricsSeries s = series(4);
        s.scrapes.get(1).values.remove(B);
        ModeResult.CapacityStep step = step(2.5, 12.5, 1);
        BrokerCountedDeliveries.fill(List.of(step), s, n -> n / 1e9);
        assertEquals(step.brokerDeliveredInWindow, -1, "b has no sample at 5 s, next to the window's start");
        ModeResult.CapacityStep later = step(10, 15, 0.0075);
        BrokerCountedDeliveries.fill(List.of(later), s, n -> n / 1e9);
        assertEquals(later.brokerDeliveredInWindow, 7_500, "both counted from 10 s on");
    }

    @Test(timeOut = 10_000)
    public void aMissingSampleOrACounterResetGivesNoFigure() {
        double[] t = {0, 5, 10};
        assertTrue(Double.isNaN(BrokerCountedDeliveries.at(t, new double[] {0, Double.NaN, 10}, 2)));
        assertTrue(Double.isNaN(BrokerCountedDeliveries.at(t, new double[] {0, 100, 10}, 7)), "a reset");
        assertEquals(BrokerCountedDeliveries.at(t, new double[] {0, 100, 300}, 7.5), 200.0, 1e-9);
        assertTrue(Double.isNaN(BrokerCountedDeliveries.at(t, new double[] {0, 100, 300}, -1)));
    }
}
