package io.github.pulsarbroadcast.broadcast.prometheus;

import static org.testng.Assert.assertEquals;

import io.github.pulsarbroadcast.broadcast.metrics.LatencyHistogram;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.apache.pulsar.common.util.SimpleTextOutputStream;
import org.testng.annotations.Test;

/** The text the broker serves: escaping of label values, histogram lines. */
@Test(groups = "unit")
public class MetricsTextTest {

    @Test(timeOut = 10_000)
    public void labelValuesAreEscapedAsPrometheusRequires() {
        assertEquals(MetricsText.label("subscription", "a\"b\\c\nd"), "subscription=\"a\\\"b\\\\c\\nd\"");
        assertEquals(MetricsText.label("topic", "persistent://t/ns/x"), "topic=\"persistent://t/ns/x\"");
    }

    @Test(timeOut = 10_000)
    public void histogramLinesAreCumulativeWithInfSumAndCount() {
        LatencyHistogram h = new LatencyHistogram();
        h.recordNanos(300_000);       // 0.3 ms
        h.recordNanos(7_000_000_000L); // 7 s: only +Inf
        ByteBuf buf = Unpooled.buffer();
        try {
            MetricsText text = new MetricsText(new SimpleTextOutputStream(buf));
            text.family("x_ms", "histogram", "help");
            text.histogram("x_ms", "a=\"1\"", h.snapshot());
            String out = buf.toString(StandardCharsets.UTF_8);
            String[] lines = out.split("\n");
            assertEquals(lines[0], "# HELP x_ms help");
            assertEquals(lines[1], "# TYPE x_ms histogram");
            assertEquals(lines[2], "x_ms_bucket{a=\"1\",le=\"0.5\"} 1");
            assertEquals(lines[3], "x_ms_bucket{a=\"1\",le=\"1\"} 1");
            assertEquals(lines[13], "x_ms_bucket{a=\"1\",le=\"5000\"} 1");
            assertEquals(lines[14], "x_ms_bucket{a=\"1\",le=\"+Inf\"} 2");
            assertEquals(lines[15], "x_ms_sum{a=\"1\"} 7000.300");
            assertEquals(lines[16], "x_ms_count{a=\"1\"} 2");
        } finally {
            buf.release();
        }
    }
}
