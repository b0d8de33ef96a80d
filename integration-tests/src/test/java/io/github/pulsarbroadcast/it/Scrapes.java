package io.github.pulsarbroadcast.it;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a broker's Prometheus text ({@code /metrics/}) for tests: the plugin's samples of one subscription, one stock
 * sample, or the sum of a family over every subscription of the broker.
 *
 * <p>Threading: stateless; any thread.
 */
final class Scrapes {

    /** {@code name{labels} value}; labels kept as one string. */
    static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)})? (\\S+)$");

    private Scrapes() {
    }

    /** GET {@code path} of the broker's web service; asserts a 200. */
    static String get(String webServiceUrl, String path) throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create(webServiceUrl + path)).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(response.statusCode(), 200, path);
        return response.body();
    }

    /**
     * The plugin's samples of the one subscription matching {@code selector}, keyed by name plus the labels other than
     * cluster, namespace, topic and subscription (e.g. {@code x{stage="a"}}); executor and broker samples excluded.
     */
    static Map<String, Double> subscription(String body, String selector) {
        Map<String, Double> out = new HashMap<>();
        for (String line : body.split("\n")) {
            Matcher s = SAMPLE.matcher(line);
            if (!line.startsWith("pulsar_broadcast_") || !s.matches() || s.group(3) == null
                    || !s.group(3).contains(selector)) {
                continue;
            }
            StringBuilder rest = new StringBuilder();
            for (String label : s.group(3).split(",(?=[a-z_]+=\")")) {
                if (!label.matches("(cluster|namespace|topic|subscription)=.*")) {
                    rest.append(rest.length() == 0 ? "" : ",").append(label);
                }
            }
            String key = rest.length() == 0 ? s.group(1) : s.group(1) + "{" + rest + "}";
            out.put(key, value(s));
        }
        return out;
    }

    /** The value of the one sample {@code name} whose labels contain {@code selector}. */
    static double sample(String body, String name, String selector) {
        Double found = null;
        for (String line : body.split("\n")) {
            Matcher s = SAMPLE.matcher(line);
            if (s.matches() && s.group(1).equals(name) && s.group(3) != null && s.group(3).contains(selector)) {
                assertEquals(found, null, "one sample of " + name + " with " + selector);
                found = value(s);
            }
        }
        assertTrue(found != null, "no sample of " + name + " with " + selector);
        return found;
    }

    /** The sum of every sample named {@code name}, whatever its labels (0 when there is none). */
    static double sum(String body, String name) {
        double sum = 0;
        for (String line : body.split("\n")) {
            Matcher s = SAMPLE.matcher(line);
            if (s.matches() && s.group(1).equals(name)) {
                sum += value(s);
            }
        }
        return sum;
    }

    private static double value(Matcher sample) {
        return Double.parseDouble(sample.group(4).replace("+Inf", "Infinity"));
    }
}
