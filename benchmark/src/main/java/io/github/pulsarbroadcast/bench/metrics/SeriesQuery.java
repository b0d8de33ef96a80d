package io.github.pulsarbroadcast.bench.metrics;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * PromQL-like queries over a {@link MetricsSeries}: the value of each series at every successful scrape, summed
 * by labels ({@code sum by (...)}), their rates ({@code sum by (...) (rate(x[w]))}) and histogram quantiles
 * ({@code histogram_quantile(q, sum by (le, ...) (rate(x_bucket[w])))}); a missing sample is NaN.
 *
 * <p>Threading: not thread-safe; one thread builds and uses it.
 */
public final class SeriesQuery {

    /** Labels that match everything. */
    public static final Predicate<Map<String, String>> ALL = l -> true;

    private final List<MetricsSeries.Scrape> scrapes;
    private final double[] t;
    private final Map<String, PromText.Sample> parsed = new HashMap<>();

    public SeriesQuery(MetricsSeries series) {
        this.scrapes = series.ok();
        this.t = series.times();
    }

    /** The scrape times (s). */
    public double[] times() {
        return t.clone();
    }

    public int size() {
        return t.length;
    }

    private PromText.Sample sample(String key) {
        return parsed.computeIfAbsent(key, k -> PromText.parseLine(k + " 0"));
    }

    /** Every series of metric {@code name} whose labels pass {@code filter}: its labels and values per scrape. */
    public Map<Map<String, String>, double[]> series(String name, Predicate<Map<String, String>> filter) {
        Map<Map<String, String>, double[]> out = new HashMap<>();
        for (int i = 0; i < scrapes.size(); i++) {
            for (Map.Entry<String, Double> e : scrapes.get(i).values.entrySet()) {
                if (!e.getKey().startsWith(name)) {
                    continue;
                }
                PromText.Sample s = sample(e.getKey());
                if (s.name.equals(name) && filter.test(s.labels)) {
                    out.computeIfAbsent(s.labels, l -> nan(t.length))[i] = e.getValue();
                }
            }
        }
        return out;
    }

    /** {@code sum by (groupBy) (name{filter})}, keyed by the group's label values joined with '/'. */
    public Map<String, double[]> sum(String name, Predicate<Map<String, String>> filter, String... groupBy) {
        return group(series(name, filter), groupBy);
    }

    /** {@code sum by (groupBy) (rate(name{filter}[window]))}. */
    public Map<String, double[]> rate(String name, Predicate<Map<String, String>> filter, double window,
            String... groupBy) {
        Map<Map<String, String>, double[]> rates = new HashMap<>();
        series(name, filter).forEach((labels, v) -> rates.put(labels, PromMath.rate(t, v, window)));
        return group(rates, groupBy);
    }

    /**
     * {@code histogram_quantile(q, sum by (le, groupBy) (rate(base_bucket{filter}[window])))} at every scrape,
     * keyed by the group's label values.
     */
    public Map<String, double[]> quantile(double q, String base, Predicate<Map<String, String>> filter,
            double window, String... groupBy) {
        Map<String, TreeMap<Double, double[]>> buckets = buckets(base, filter, groupBy,
                v -> PromMath.rate(t, v, window));
        Map<String, double[]> out = new TreeMap<>();
        buckets.forEach((g, byLe) -> {
            double[] r = new double[t.length];
            for (int i = 0; i < t.length; i++) {
                r[i] = quantileAt(q, byLe, i, null);
            }
            out.put(g, r);
        });
        return out;
    }

    /**
     * The buckets of histogram {@code base} per group: le bound to the summed (transformed) bucket series.
     */
    public Map<String, TreeMap<Double, double[]>> buckets(String base, Predicate<Map<String, String>> filter,
            String[] groupBy, java.util.function.UnaryOperator<double[]> transform) {
        Map<String, TreeMap<Double, double[]>> out = new TreeMap<>();
        series(base + "_bucket", filter).forEach((labels, v) -> {
            double le = PromText.number(labels.getOrDefault("le", "NaN"));
            double[] x = transform.apply(v);
            double[] sum = out.computeIfAbsent(groupKey(labels, groupBy), g -> new TreeMap<>())
                    .computeIfAbsent(le, b -> new double[t.length]);
            for (int i = 0; i < x.length; i++) {
                sum[i] += x[i];
            }
        });
        return out;
    }

    /**
     * The quantile of the buckets at scrape {@code i}, or of the increase from scrape {@code from} to {@code i}
     * when {@code from} is given.
     */
    public static double quantileAt(double q, TreeMap<Double, double[]> byLe, int i, Integer from) {
        double[] le = new double[byLe.size()];
        double[] counts = new double[byLe.size()];
        int k = 0;
        for (Map.Entry<Double, double[]> b : byLe.entrySet()) {
            le[k] = b.getKey();
            double c = b.getValue()[i] - (from == null ? 0 : b.getValue()[from]);
            counts[k++] = Double.isNaN(c) ? 0 : c;
        }
        return PromMath.quantile(q, le, counts);
    }

    private Map<String, double[]> group(Map<Map<String, String>, double[]> series, String... groupBy) {
        Map<String, double[]> out = new TreeMap<>();
        series.forEach((labels, v) -> {
            double[] sum = out.computeIfAbsent(groupKey(labels, groupBy), g -> nan(t.length));
            for (int i = 0; i < v.length; i++) {
                if (!Double.isNaN(v[i])) {
                    sum[i] = Double.isNaN(sum[i]) ? v[i] : sum[i] + v[i];
                }
            }
        });
        return out;
    }

    private static String groupKey(Map<String, String> labels, String... groupBy) {
        List<String> parts = new ArrayList<>();
        for (String g : groupBy) {
            parts.add(labels.getOrDefault(g, ""));
        }
        return String.join("/", parts);
    }

    private static double[] nan(int n) {
        double[] a = new double[n];
        Arrays.fill(a, Double.NaN);
        return a;
    }
}
