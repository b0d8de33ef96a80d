package io.github.pulsarbroadcast.bench.metrics;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertNull;
import static org.testng.Assert.assertTrue;

import java.io.BufferedReader;
import java.io.StringReader;
import java.util.List;
import java.util.Map;
import org.testng.annotations.Test;

/**
 * {@link StageBreakdown} and {@link SeriesQuery} on series parsed from {@link SampleMetrics} bodies (through the
 * sampler's own filter), scraped once a second.
 *
 * <p>Threading: TestNG's test thread.
 */
@Test(groups = "unit")
public class StageBreakdownTest {

    /** A series of scrapes at t = 0, 1, ... of bodies {@code ks}. */
    static MetricsSeries series(int... ks) throws Exception {
        MetricsSeries s = new MetricsSeries();
        s.url = "http://test/metrics/";
        s.topic = SampleMetrics.TOPIC;
        s.intervalSeconds = 1;
        MetricsSamplerTestAccess sampler = new MetricsSamplerTestAccess(SampleMetrics.TOPIC);
        for (int i = 0; i < ks.length; i++) {
            MetricsSeries.Scrape scrape = new MetricsSeries.Scrape();
            scrape.t = i;
            sampler.read(SampleMetrics.body(ks[i]), scrape.values);
            s.scrapes.add(scrape);
        }
        return s;
    }

    @Test(timeOut = 10_000)
    public void stagesOverTheWindowFromBucketDifferences() throws Exception {
        MetricsSeries s = series(0, 1, 2, 3, 4, 5);
        s.windowFrom = 1.5;
        s.windowTo = 3.5;
        StageBreakdown b = StageBreakdown.of(s);
        assertTrue(b.present, String.valueOf(b.note));
        assertEquals(b.fromSeconds, 1.0, "last scrape at or before the window's start");
        assertEquals(b.toSeconds, 4.0, "first scrape at or after its end");
        assertEquals(b.stages.size(), 4);
        StageBreakdown.Stage persist = b.stages.get(0);
        assertEquals(persist.stage, "receive_to_persisted");
        assertEquals(persist.count, 30, "10 observations per step, 3 steps");
        assertEquals(persist.p50, 3.0, 1e-9, "all in (1, 5]: interpolated half way");
        assertEquals(persist.p99, 5.0, 1e-9, "4.96 rounded to 0.1 ms");
        StageBreakdown.Stage first = b.stages.get(1);
        assertEquals(first.stage, "persisted_to_dispatch");
        assertEquals(first.p50, 0.3, 1e-9, "(0, 0.5]: 0.25 rounded");
        assertEquals(b.stages.get(3).p99, 49.7, 1e-9, "(20, 50]: 20 + 30 x 0.99");
        assertEquals(b.fanOutPass.count, 30);
        assertEquals(b.scrapes, 6);
    }

    @Test(timeOut = 10_000)
    public void withoutAWindowTheWholeSeries() throws Exception {
        StageBreakdown b = StageBreakdown.of(series(2, 3, 7));
        assertEquals(b.stages.get(0).count, 50);
    }

    @Test(timeOut = 10_000)
    public void absentMetricsAreSaid() throws Exception {
        MetricsSeries s = new MetricsSeries();
        s.intervalSeconds = 1;
        MetricsSamplerTestAccess sampler = new MetricsSamplerTestAccess(SampleMetrics.TOPIC);
        for (int i = 0; i < 3; i++) {
            MetricsSeries.Scrape scrape = new MetricsSeries.Scrape();
            scrape.t = i;
            sampler.read("# TYPE pulsar_rate_in gauge\npulsar_rate_in{cluster=\"c\",namespace=\"n\",topic=\""
                    + SampleMetrics.TOPIC + "\"} 1\nprocess_cpu_seconds_total " + i + "\n", scrape.values);
            s.scrapes.add(scrape);
        }
        StageBreakdown b = StageBreakdown.of(s);
        assertFalse(b.present);
        assertTrue(b.note.contains("no pulsar_broadcast_ metrics"), b.note);
        assertTrue(b.stages.isEmpty());
        assertNull(b.fanOutPass);
        assertFalse(StageBreakdown.of(new MetricsSeries()).present, "no scrapes at all");
    }

    @Test(timeOut = 10_000)
    public void queriesLikePromQl() throws Exception {
        SeriesQuery q = new SeriesQuery(series(0, 1, 2));
        Map<String, double[]> byState = q.sum("pulsar_broadcast_consumers", SeriesQuery.ALL, "state");
        assertEquals(byState.keySet(), java.util.Set.of("waiting", "catching_up"), "the other topic is left out");
        assertEquals(byState.get("waiting")[2], 18.0);
        double[] rate = q.rate("pulsar_broadcast_messages_delivered_total", SeriesQuery.ALL, 1.5).get("");
        assertEquals(rate[2], 200.0, 1e-9);
        double[] p50 = q.quantile(0.5, StageBreakdown.STAGE_METRIC, SeriesQuery.ALL, 1.5, "stage")
                .get("dispatch_to_last_write");
        assertTrue(Double.isNaN(p50[0]));
        assertEquals(p50[1], 35.0, 1e-9);
        List<DashboardPanels.Panel> panels = DashboardPanels.build(series(0, 1, 2));
        assertEquals(panels.get(0).title, "Consumers by state");
        assertTrue(panels.stream().anyMatch(p -> p.title.startsWith("Broker CPU") && !p.lines.isEmpty()));
        assertTrue(panels.stream().anyMatch(p -> p.title.startsWith("Machine CPU")), "the benchmark's own panel");
    }

    /** Reaches the sampler's body parser without a server. Threading: the test thread. */
    static final class MetricsSamplerTestAccess {
        private final String topic;

        MetricsSamplerTestAccess(String topic) {
            this.topic = topic;
        }

        void read(String body, Map<String, Double> into) throws Exception {
            MetricsSampler.read(topic, new BufferedReader(new StringReader(body)), into);
        }
    }
}
