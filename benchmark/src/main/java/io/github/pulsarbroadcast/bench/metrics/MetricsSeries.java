package io.github.pulsarbroadcast.bench.metrics;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the sampler kept of one run: every scrape of the broker's {@code /metrics} with the wanted samples, keyed
 * by their canonical form ({@link PromText#key}: name and sorted labels, without cluster, namespace and topic, which
 * are the run's), and the measured window on the same clock. Written as {@code metrics/<mode>-N<n>.json} in the
 * results folder and read back by {@link DashboardCommand}.
 *
 * <p>Threading: filled by the sampler thread under the sampler's lock; read after the sampler closed (or from a
 * file) by one thread.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public final class MetricsSeries {

    /** One scrape. Threading: as above. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public static final class Scrape {
        /** Seconds since the sampler started. */
        public double t;
        public long epochMs;
        /** Wall time of the HTTP request, body read and parsed (ms). */
        public double scrapeMs;
        /** Bytes of the body. */
        public long bytes;
        /** Why the scrape failed (then {@link #values} holds only the benchmark's own samples of the machine). */
        public String error;
        /** Finite sample values by key; NaN and infinite values are left out. */
        public Map<String, Double> values = new LinkedHashMap<>();
    }

    /** The broker's metrics URL. */
    public String url;
    public String topic;
    /** A label for titles (mode and consumers). */
    public String title;
    public double intervalSeconds;
    public long startEpochMs;
    /** The measured window in seconds since the start; null when the run had none. */
    public Double windowFrom;
    public Double windowTo;
    public List<Scrape> scrapes = new ArrayList<>();

    private static ObjectMapper json() {
        return new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT)
                .setSerializationInclusion(JsonInclude.Include.NON_NULL);
    }

    public void write(Path file) throws IOException {
        json().writeValue(file.toFile(), this);
    }

    public static MetricsSeries read(Path file) throws IOException {
        return json().readValue(file.toFile(), MetricsSeries.class);
    }

    /** The successful scrapes' times. */
    public double[] times() {
        return ok().stream().mapToDouble(s -> s.t).toArray();
    }

    /** The scrapes that succeeded, in order. */
    public List<Scrape> ok() {
        List<Scrape> ok = new ArrayList<>();
        for (Scrape s : scrapes) {
            if (s.error == null) {
                ok.add(s);
            }
        }
        return ok;
    }

    /** True when some successful scrape holds a sample whose name starts with {@code prefix}. */
    public boolean has(String prefix) {
        for (Scrape s : scrapes) {
            for (String k : s.values.keySet()) {
                if (k.startsWith(prefix)) {
                    return true;
                }
            }
        }
        return false;
    }
}
