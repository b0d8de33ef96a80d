package io.github.pulsarbroadcast.bench;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;

import io.github.pulsarbroadcast.bench.core.Mode;
import io.github.pulsarbroadcast.bench.core.Percentiles;
import io.github.pulsarbroadcast.bench.metrics.StageBreakdown;
import java.util.List;
import org.testng.annotations.Test;

/**
 * {@link StageTable}: the report's broker-stage section, with figures and without (a broker without the metrics).
 *
 * <p>Threading: TestNG's test thread.
 */
@Test(groups = "unit")
public class StageTableTest {

    @Test(timeOut = 10_000)
    public void showsStagesBesideEndToEndAndSaysWhenAbsent() {
        ModeResult with = new ModeResult(Mode.BROADCAST, 1000, 1);
        with.latency = new ModeResult.Latency();
        with.latency.endToEnd = new Percentiles();
        with.latency.endToEnd.count = 10;
        with.latency.endToEnd.p50 = 40;
        with.latency.endToEnd.p99 = 170;
        with.brokerStages = new StageBreakdown();
        with.brokerStages.present = true;
        with.brokerStages.dashboardFile = "dashboard-broadcast-N1000.png";
        for (String name : StageBreakdown.STAGES) {
            StageBreakdown.Stage s = new StageBreakdown.Stage();
            s.stage = name;
            s.count = 30;
            s.p50 = 3;
            s.p99 = 123.4;
            with.brokerStages.stages.add(s);
        }
        ModeResult without = new ModeResult(Mode.SPLIT, 1000, 4);
        without.brokerStages = new StageBreakdown();
        without.brokerStages.note = "the broker exported no pulsar_broadcast_ metrics (a stock broker)";
        ModeResult stock = new ModeResult(Mode.SUBSCRIPTIONS, 1000, 1000);
        String md = StageTable.markdown(List.of(with, without, stock));
        String[] lines = md.split("\n");
        assertTrue(lines[2].startsWith("| broadcast | 1,000 | 40 / 170 | – | 3.0 / 123 | 3.0 / 123 |"), lines[2]);
        assertTrue(lines[2].contains("[dashboard-broadcast-N1000.png]"), lines[2]);
        assertTrue(lines[3].startsWith("| split | 1,000 |"), lines[3]);
        assertEquals(md.split("\n\\| subscriptions").length, 1, "runs without sampling have no row");
        assertTrue(md.contains("split at 1,000 consumers: no broker stages: the broker exported no"), md);
        assertEquals(StageTable.markdown(List.of(stock)), "");
    }
}
