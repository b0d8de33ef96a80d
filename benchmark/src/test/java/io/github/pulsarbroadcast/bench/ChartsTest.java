package io.github.pulsarbroadcast.bench;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertNotNull;

import io.github.pulsarbroadcast.bench.core.Mode;
import io.github.pulsarbroadcast.bench.core.Percentiles;
import java.util.ArrayList;
import java.util.List;
import org.HdrHistogram.Histogram;
import org.knowm.xchart.CategoryChart;
import org.testng.annotations.Test;

/**
 * The charts of a run with {@code --repeat}: each repetition of a mode is its own series. Regression: the latency
 * chart named its series by mode alone, and XChart refused the second one ("Series name >subscriptions< has already
 * been used"), so a repeated run's latency chart was missing.
 *
 * <p>Threading: TestNG's test thread only.
 */
@Test(groups = "unit")
public class ChartsTest {

    @Test(timeOut = 30_000)
    public void everyRepetitionOfAModeIsASeriesOfTheLatencyChart() {
        List<ModeResult> results = new ArrayList<>();
        for (int k = 0; k < 2; k++) {
            for (Mode mode : List.of(Mode.BROADCAST, Mode.SUBSCRIPTIONS)) {
                ModeResult r = new ModeResult(mode, 100, 1);
                r.repeat = k;
                r.latency = new ModeResult.Latency();
                Histogram h = new Histogram(3);
                h.recordValue(10 + k);
                r.latency.endToEnd = Percentiles.of(h);
                results.add(r);
            }
        }
        CategoryChart chart = Charts.latencyChart(results, 100);
        assertNotNull(chart);
        assertEquals(chart.getSeriesMap().keySet(), java.util.Set.of("broadcast", "subscriptions", "broadcast #2",
                "subscriptions #2"));
    }
}
