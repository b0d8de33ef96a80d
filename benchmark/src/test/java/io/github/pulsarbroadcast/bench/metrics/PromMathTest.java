package io.github.pulsarbroadcast.bench.metrics;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;

import org.testng.annotations.Test;

/**
 * {@link PromMath}: {@code rate()} and {@code histogram_quantile()} as Prometheus computes them.
 *
 * <p>Threading: TestNG's test thread.
 */
@Test(groups = "unit")
public class PromMathTest {

    private static final double INF = Double.POSITIVE_INFINITY;

    @Test(timeOut = 10_000)
    public void quantileInterpolatesInsideTheBucket() {
        double[] le = {1, 5, 10, INF};
        // 10 in [0,1], 30 in (1,5], 60 in (5,10], none above.
        double[] counts = {10, 40, 100, 100};
        assertEquals(PromMath.quantile(0.5, le, counts), 5 + 5 * (10.0 / 60), 1e-9);
        assertEquals(PromMath.quantile(0.05, le, counts), 0.5, 1e-9, "first bucket from 0");
        assertEquals(PromMath.quantile(0.99, le, counts), 5 + 5 * (59.0 / 60), 1e-9);
        assertEquals(PromMath.quantile(1, le, counts), 10, 1e-9);
    }

    @Test(timeOut = 10_000)
    public void quantileInTheInfBucketIsTheHighestFiniteBound() {
        double[] le = {INF, 1, 5};
        double[] counts = {100, 10, 50};
        assertEquals(PromMath.quantile(0.99, le, counts), 5, 1e-9, "buckets in any order");
    }

    @Test(timeOut = 10_000)
    public void quantileEdgeCases() {
        assertTrue(Double.isNaN(PromMath.quantile(0.5, new double[] {1, INF}, new double[] {0, 0})), "no data");
        assertTrue(Double.isNaN(PromMath.quantile(0.5, new double[] {1, 5}, new double[] {1, 2})), "no +Inf");
        assertTrue(Double.isNaN(PromMath.quantile(0.5, new double[] {INF}, new double[] {2})), "one bucket");
        assertEquals(PromMath.quantile(-1, new double[] {1, INF}, new double[] {1, 1}), Double.NEGATIVE_INFINITY);
        assertEquals(PromMath.quantile(2, new double[] {1, INF}, new double[] {1, 1}), INF);
        assertEquals(PromMath.quantile(0.5, new double[] {1, 5, INF}, new double[] {10, 8, 10}), 0.5, 1e-9,
                "non-monotonic counts made monotonic");
    }

    @Test(timeOut = 10_000)
    public void rateCountsResetsAndUsesTheWindow() {
        double[] t = {0, 1, 2, 3, 4};
        double[] v = {0, 10, 20, 5, 15};
        double[] consecutive = PromMath.rate(t, v, 1);
        assertTrue(Double.isNaN(consecutive[0]));
        assertEquals(consecutive[1], 10, 1e-9);
        assertEquals(consecutive[3], 5, 1e-9, "after a reset the new value is all increase");
        assertEquals(consecutive[4], 10, 1e-9);
        double[] wide = PromMath.rate(t, v, 4);
        assertEquals(wide[4], (10 + 10 + 5 + 10) / 4.0, 1e-9);
        assertEquals(wide[2], 10, 1e-9);
        double[] gap = PromMath.rate(t, new double[] {0, Double.NaN, 2, 3, 4}, 1);
        assertTrue(Double.isNaN(gap[1]) && Double.isNaN(gap[2]));
        assertEquals(gap[3], 1, 1e-9);
    }
}
