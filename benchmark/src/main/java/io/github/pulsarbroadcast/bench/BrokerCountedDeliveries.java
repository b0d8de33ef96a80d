package io.github.pulsarbroadcast.bench;

import io.github.pulsarbroadcast.bench.metrics.MetricsSeries;
import io.github.pulsarbroadcast.bench.metrics.SeriesQuery;
import java.util.Collection;
import java.util.List;
import java.util.function.LongToDoubleFunction;

/**
 * A capacity step's CPU per delivery by the broker's own count. The step's own figure divides by what the consumers
 * had received by the end of its window; with large receiver queues, messages written but still in flight then make
 * an overloaded step look more expensive than it was (ninth session: 5.7 us by receipts against 3.0-3.7 us by the
 * broker's counter). Here the broker's {@code pulsar_broadcast_messages_delivered_total} (every subscription of the
 * topic) is read at both edges of the step's window, each interpolated linearly between the two scrapes around it
 * ({@code --metrics-interval} apart, so the count carries up to one interval's worth of smoothing at each edge; a
 * scrape's time is when its request started, a little before the counters were read).
 *
 * <p>Threading: static functions, called by the run's thread after sampling stopped.
 */
final class BrokerCountedDeliveries {

    static final String DELIVERED = "pulsar_broadcast_messages_delivered_total";

    private BrokerCountedDeliveries() {
    }

    /**
     * Fills every step's broker-counted figures from {@code series}; {@code secondsAt} maps a
     * {@link System#nanoTime} instant to the series' clock. Steps whose edges fall outside the scrapes keep -1.
     */
    static void fill(List<ModeResult.CapacityStep> steps, MetricsSeries series, LongToDoubleFunction secondsAt) {
        SeriesQuery q = new SeriesQuery(series);
        Collection<double[]> subscriptions = q.series(DELIVERED, SeriesQuery.ALL).values();
        if (subscriptions.isEmpty()) {
            return;
        }
        double[] t = q.times();
        for (ModeResult.CapacityStep step : steps) {
            double from = total(t, subscriptions, secondsAt.applyAsDouble(step.windowFromNanos));
            double to = total(t, subscriptions, secondsAt.applyAsDouble(step.windowToNanos));
            if (!Double.isNaN(from) && !Double.isNaN(to) && to >= from) {
                step.brokerDeliveredInWindow = Math.round(to - from);
                step.brokerCpuUsPerBrokerDelivery = CapacitySteps.perDelivery(step.brokerCpuSeconds,
                        step.brokerDeliveredInWindow);
            }
        }
    }

    /**
     * The sum of every subscription's counter at time {@code x}; NaN when any of them is unknown there (a missing
     * sample or a reset next to {@code x}), so that a partial sum never passes for the whole.
     */
    static double total(double[] t, Collection<double[]> subscriptions, double x) {
        double sum = 0;
        for (double[] v : subscriptions) {
            sum += at(t, v, x);
        }
        return sum;
    }

    /**
     * The counter {@code v} (sampled at times {@code t}, ascending) at time {@code x}, interpolated linearly between
     * the samples around it (its own value on a sample); NaN outside the sampled span, next to a missing sample or
     * across a reset.
     */
    static double at(double[] t, double[] v, double x) {
        for (int i = 0; i < t.length; i++) {
            if (x == t[i]) {
                return v[i]; // on a scrape: its own value, whatever its neighbours hold
            }
        }
        for (int i = 1; i < t.length; i++) {
            if (x <= t[i] && x >= t[i - 1]) {
                double a = v[i - 1];
                double b = v[i];
                if (Double.isNaN(a) || Double.isNaN(b) || b < a) {
                    return Double.NaN;
                }
                double span = t[i] - t[i - 1];
                return span <= 0 ? b : a + (b - a) * (x - t[i - 1]) / span;
            }
        }
        return Double.NaN;
    }
}
