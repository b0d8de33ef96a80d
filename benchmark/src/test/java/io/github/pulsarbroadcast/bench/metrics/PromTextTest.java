package io.github.pulsarbroadcast.bench.metrics;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;
import static org.testng.Assert.expectThrows;

import java.io.BufferedReader;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.testng.annotations.Test;

/**
 * {@link PromText}: the Prometheus text format as the broker writes it.
 *
 * <p>Threading: TestNG's test thread.
 */
@Test(groups = "unit")
public class PromTextTest {

    @Test(timeOut = 10_000)
    public void readsLabelsWithEscapesAndSpecialValues() {
        PromText.Sample s = PromText.parseLine("m{a=\"x \\\"quoted\\\" \\\\ back\\nline\",le=\"+Inf\"} +Inf");
        assertEquals(s.name, "m");
        assertEquals(s.labels.get("a"), "x \"quoted\" \\ back\nline");
        assertEquals(s.labels.get("le"), "+Inf");
        assertEquals(s.value, Double.POSITIVE_INFINITY);
        assertTrue(Double.isNaN(PromText.parseLine("m NaN").value));
        assertEquals(PromText.parseLine("m -Inf").value, Double.NEGATIVE_INFINITY);
        assertEquals(PromText.parseLine("m{} 1.5e-3").value, 0.0015);
        assertEquals(PromText.parseLine("m 1E6 1700000000000").value, 1e6, "a timestamp after the value");
        assertEquals(PromText.parseLine("jvm_memory_bytes_used{area=\"heap\",} 1.2E8").labels,
                Map.of("area", "heap"), "a trailing comma, as simpleclient writes it");
        assertEquals(PromText.parseLine("m{a=\"1,2}\"} 3").labels.get("a"), "1,2}", "comma and brace inside quotes");
    }

    @Test(timeOut = 10_000)
    public void rejectsMalformedLines() {
        expectThrows(IllegalArgumentException.class, () -> PromText.parseLine("m{a=\"x\" 1"));
        expectThrows(IllegalArgumentException.class, () -> PromText.parseLine("m{a=x} 1"));
        expectThrows(IllegalArgumentException.class, () -> PromText.parseLine("m"));
        expectThrows(IllegalArgumentException.class, () -> PromText.parseLine("m one"));
    }

    @Test(timeOut = 10_000)
    public void streamsOnlyWantedNamesAndReportsTypes() throws Exception {
        String body = "# HELP a_total Some \"help\" text\n# TYPE a_total counter\na_total{x=\"1\"} 3\n"
                + "b{broken 1\n\n# a comment\na_total{x=\"2\"} 4e0\na_total{broken 5\n";
        List<String> seen = new ArrayList<>();
        Map<String, String> types = new LinkedHashMap<>();
        int malformed = PromText.parse(new BufferedReader(new StringReader(body)), n -> n.startsWith("a_"),
                new PromText.Sink() {
                    @Override
                    public void sample(String name, Map<String, String> labels, double value) {
                        seen.add(name + labels + value);
                    }

                    @Override
                    public void type(String name, String type) {
                        types.put(name, type);
                    }
                });
        assertEquals(seen, List.of("a_total{x=1}3.0", "a_total{x=2}4.0"));
        assertEquals(types, Map.of("a_total", "counter"));
        assertEquals(malformed, 1, "the unwanted malformed line is never parsed");
    }

    @Test(timeOut = 10_000)
    public void keysAreCanonicalAndReadBack() {
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put("topic", "persistent://t");
        labels.put("stage", "a\"b");
        labels.put("le", "0.5");
        String key = PromText.key("m_bucket", labels, Set.of("topic"));
        assertEquals(key, "m_bucket{le=\"0.5\",stage=\"a\\\"b\"}");
        assertEquals(PromText.parseLine(key + " 1").labels, Map.of("le", "0.5", "stage", "a\"b"));
        assertEquals(PromText.key("m", Map.of("topic", "x"), Set.of("topic")), "m");
    }

    @Test(timeOut = 10_000)
    public void parsesTheSampleBody() throws Exception {
        List<String> names = new ArrayList<>();
        int malformed = PromText.parse(new BufferedReader(new StringReader(SampleMetrics.body(3))), n -> true,
                (name, labels, value) -> names.add(name));
        assertEquals(malformed, 0);
        assertTrue(names.contains("pulsar_broadcast_stage_latency_ms_bucket"), names.toString());
        assertTrue(names.contains("process_cpu_seconds_total"));
    }
}
