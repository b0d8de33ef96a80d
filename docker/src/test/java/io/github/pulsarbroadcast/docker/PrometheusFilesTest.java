package io.github.pulsarbroadcast.docker;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.testng.SkipException;
import org.testng.annotations.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * docker/prometheus and docker/grafana checked by Prometheus's own {@code promtool} (Debian's {@code prometheus}
 * package, which {@code .ci/run} installs), as docs/operations.md says they are: the alert rules are valid and pass
 * their unit tests ({@code pulsar-broadcast-alerts.test.yml}: each rule fires on the series that must fire it, with
 * its labels and text, and not on the others), the Prometheus configuration is valid, and every PromQL expression of
 * the Grafana dashboard parses (checked as a recording rule, with the dashboard's variables replaced). Skipped, with
 * a message, when no {@code promtool} is installed.
 *
 * <p>Threading: TestNG's test thread only.
 */
@Test(groups = "unit", timeOut = 120_000)
public class PrometheusFilesTest {

    /** A dashboard variable in an expression: {@code $name} or {@code ${name}}. */
    private static final Pattern VARIABLE = Pattern.compile("\\$\\{?(\\w+)}?");
    /** What each dashboard variable stands for in the check: a time range, or any label value. */
    private static final Map<String, String> VARIABLES = Map.of("__rate_interval", "1m", "__range", "1h",
            "cluster", ".*", "namespace", ".*", "topic", ".*", "subscription", ".*");

    public void alertRulesAreValidAndPassTheirTests() {
        Path dir = Build.prometheus();
        promtool(dir, "check", "rules", "pulsar-broadcast-alerts.yml");
        Build.Result tests = promtool(dir, "test", "rules", "pulsar-broadcast-alerts.test.yml");
        assertTrue(tests.output.contains("SUCCESS"), tests.toString());
    }

    public void prometheusConfigurationIsValid() {
        promtool(Build.prometheus(), "check", "config", "prometheus.yml");
    }

    public void everyDashboardExpressionParses() throws IOException {
        List<String> expressions = new ArrayList<>();
        collect(new Yaml().load(Build.read(Build.grafana().resolve("pulsar-broadcast.json"))), expressions);
        assertFalse(expressions.isEmpty(), "no expressions found in the dashboard");
        List<Map<String, String>> rules = new ArrayList<>();
        for (int i = 0; i < expressions.size(); i++) {
            Map<String, String> rule = new LinkedHashMap<>();
            rule.put("record", "dashboard:expression_" + i);
            rule.put("expr", replaceVariables(expressions.get(i)));
            rules.add(rule);
        }
        Map<String, Object> group = new LinkedHashMap<>();
        group.put("name", "dashboard");
        group.put("rules", rules);
        Path file = Files.createTempFile("dashboard-expressions", ".yml");
        try {
            Files.writeString(file, new Yaml().dump(Map.of("groups", List.of(group))), StandardCharsets.UTF_8);
            Build.Result check = promtool(file.getParent(), "check", "rules", file.getFileName().toString());
            assertTrue(check.output.contains("SUCCESS: " + expressions.size() + " rules found"), check.toString());
        } finally {
            Files.deleteIfExists(file);
        }
    }

    private static String replaceVariables(String expression) {
        Matcher m = VARIABLE.matcher(expression);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String value = VARIABLES.get(m.group(1));
            assertTrue(value != null, "a dashboard variable this test does not know: " + m.group());
            m.appendReplacement(out, Matcher.quoteReplacement(value));
        }
        return m.appendTail(out).toString();
    }

    /** Every {@code expr} value in the dashboard's JSON (read as YAML, of which JSON is a subset). */
    private static void collect(Object node, List<String> into) {
        if (node instanceof Map) {
            for (Map.Entry<?, ?> e : ((Map<?, ?>) node).entrySet()) {
                if ("expr".equals(e.getKey()) && e.getValue() instanceof String) {
                    into.add((String) e.getValue());
                } else {
                    collect(e.getValue(), into);
                }
            }
        } else if (node instanceof List) {
            for (Object item : (List<?>) node) {
                collect(item, into);
            }
        }
    }

    /** Runs {@code promtool args} on the file of {@code dir} its last argument names and asserts it succeeded; skips
     *  the test without promtool. */
    private static Build.Result promtool(Path dir, String... args) {
        if (!Build.works("promtool", "--version")) {
            throw new SkipException("No promtool (Debian's prometheus package has it): the Prometheus files are not"
                    + " checked");
        }
        List<String> command = new ArrayList<>(List.of("promtool"));
        for (int i = 0; i < args.length; i++) {
            // the last argument is a file of dir; promtool reads the files it names relative to that file
            command.add(i == args.length - 1 ? dir.resolve(args[i]).toString() : args[i]);
        }
        Build.Result r = Build.run(command, List.of(), 60);
        assertEquals(r.exitCode, 0, r.toString());
        return r;
    }
}
