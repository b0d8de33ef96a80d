package io.github.pulsarbroadcast.bench.metrics;

import java.io.BufferedReader;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Scrapes a broker's {@code /metrics} every {@code interval} seconds during one benchmark run and keeps a
 * {@link MetricsSeries}: every {@code pulsar_broadcast_*} sample that has no topic label or the run's topic, the
 * stock topic metrics of the run's topic ({@link #TOPIC_STOCK}) and a few broker-wide stock ones
 * ({@link #BROKER_STOCK}). The body is read as a stream, line by line, and only lines of those names are parsed
 * ({@link PromText}). A failed scrape is kept with its error and does not stop the sampling. Each scrape also
 * records what the benchmark itself reads of the machine at the scrape's start (the {@code local} samples, for
 * example the machine's busy and stolen CPU: {@link #MACHINE_BUSY}, {@link #MACHINE_STOLEN}), failed scrapes too.
 *
 * <p>Threading: one daemon thread ("bench-metrics-sampler") scrapes; {@link #scrapeAt}, {@link #window} and
 * {@link #close} are called from the run's thread. The series is guarded by {@code this}.
 */
public final class MetricsSampler implements AutoCloseable {

    /** Stock Pulsar metrics kept for the run's topic. */
    public static final Set<String> TOPIC_STOCK = Set.of("pulsar_rate_in", "pulsar_rate_out", "pulsar_msg_backlog",
            "pulsar_subscription_back_log", "pulsar_throughput_in", "pulsar_throughput_out",
            "pulsar_subscriptions_count", "pulsar_consumers_count");
    /** Stock broker-wide metrics kept. */
    public static final Set<String> BROKER_STOCK = Set.of("process_cpu_seconds_total", "jvm_memory_bytes_used",
            "jvm_memory_direct_bytes_used");
    /** The benchmark's own samples of the machine: busy CPU of every process, and CPU stolen by the host (s). */
    public static final String MACHINE_BUSY = "bench_machine_busy_cpu_seconds_total";
    public static final String MACHINE_STOLEN = "bench_machine_stolen_cpu_seconds_total";
    private static final Set<String> DROPPED_LABELS = Set.of("cluster", "namespace", "topic");

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10))
            .followRedirects(HttpClient.Redirect.NORMAL).build();
    private final String url;
    private final String topic;
    private final long startNanos = System.nanoTime();
    private final MetricsSeries series = new MetricsSeries();
    private final ScheduledThreadPoolExecutor thread;
    private final Supplier<Map<String, Double>> local;

    private MetricsSampler(String url, String topic, String title, double intervalSeconds,
                           Supplier<Map<String, Double>> local) {
        this.local = local;
        this.url = url;
        this.topic = topic;
        series.url = url;
        series.topic = topic;
        series.title = title;
        series.intervalSeconds = intervalSeconds;
        series.startEpochMs = System.currentTimeMillis();
        thread = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "bench-metrics-sampler");
            t.setDaemon(true);
            return t;
        });
        // finish() lets a scrape under way end and drops the ones not begun (periodic or scrapeAt's).
        thread.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    /**
     * Starts sampling {@code url} (a broker's {@code http://host:port/metrics/}) for {@code topic} at once and
     * then every {@code intervalSeconds}, with {@code local} samples taken at the start of each scrape (none: an
     * empty map).
     */
    public static MetricsSampler start(String url, String topic, String title, double intervalSeconds,
                                       Supplier<Map<String, Double>> local) {
        MetricsSampler s = new MetricsSampler(url, topic, title, intervalSeconds, local);
        long period = Math.max(1, Math.round(intervalSeconds * 1000));
        s.thread.scheduleWithFixedDelay(s::scrape, 0, period, TimeUnit.MILLISECONDS);
        return s;
    }

    /** The metrics URL of a broker whose web service (admin URL) is {@code webUrl}. */
    public static String metricsUrl(String webUrl) {
        return webUrl.replaceAll("/+$", "") + "/metrics/";
    }

    /** One more scrape at {@link System#nanoTime} {@code nanos} (at once if that has passed). */
    public void scrapeAt(long nanos) {
        if (!thread.isShutdown()) {
            thread.schedule(this::scrape, Math.max(0, nanos - System.nanoTime()), TimeUnit.NANOSECONDS);
        }
    }

    /** Seconds on the series' clock of a {@link System#nanoTime} instant. */
    public double secondsAt(long nanos) {
        return (nanos - startNanos) / 1e9;
    }

    /** Whether {@link #finish} or {@link #close} has begun (for tests). */
    boolean isStopping() {
        return thread.isShutdown();
    }

    /** Records the measured window (two {@link System#nanoTime} instants). */
    public synchronized void window(long fromNanos, long toNanos) {
        series.windowFrom = secondsAt(fromNanos);
        series.windowTo = secondsAt(toNanos);
    }

    /**
     * Stops sampling after one last scrape (on the caller's thread) and returns the series. A scrape under way ends
     * first and is kept (regression: it was interrupted and lost, and a test counting scrapes failed in CI).
     */
    public MetricsSeries finish() {
        thread.shutdown();
        try {
            thread.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        scrape();
        synchronized (this) {
            return series;
        }
    }

    @Override
    public void close() {
        thread.shutdownNow();
    }

    private void scrape() {
        MetricsSeries.Scrape s = new MetricsSeries.Scrape();
        long t0 = System.nanoTime();
        s.t = secondsAt(t0);
        s.epochMs = System.currentTimeMillis();
        Map<String, Double> own;
        try {
            own = local.get();
        } catch (RuntimeException e) {
            own = Map.of(); // a sampler thread that died here would end every later scrape
        }
        try {
            HttpResponse<InputStream> r = http.send(HttpRequest.newBuilder(URI.create(url))
                    .timeout(Duration.ofSeconds(30)).GET().build(), HttpResponse.BodyHandlers.ofInputStream());
            try (Counting body = new Counting(r.body());
                 BufferedReader in = new BufferedReader(new InputStreamReader(body, StandardCharsets.UTF_8))) {
                if (r.statusCode() != 200) {
                    s.error = "HTTP " + r.statusCode();
                } else {
                    read(topic, in, s.values);
                }
                s.bytes = body.count;
            }
        } catch (IOException | RuntimeException e) {
            s.error = e.getClass().getSimpleName() + ": " + e.getMessage();
            s.values.clear();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        s.scrapeMs = Math.round((System.nanoTime() - t0) / 1e4) / 100.0;
        s.values.putAll(own);
        synchronized (this) {
            series.scrapes.add(s);
        }
    }

    /** Parses a body into {@code values}, keeping the wanted samples of {@code topic}. */
    static void read(String topic, BufferedReader in, Map<String, Double> values) throws IOException {
        PromText.parse(in, MetricsSampler::wanted, (name, labels, value) -> {
            String sampleTopic = labels.get("topic");
            boolean topicLevel = TOPIC_STOCK.contains(name);
            if ((sampleTopic != null || topicLevel) && !topic.equals(sampleTopic)) {
                return;
            }
            if (name.equals("jvm_memory_bytes_used") && !"heap".equals(labels.get("area"))) {
                return;
            }
            if (Double.isFinite(value)) {
                values.put(PromText.key(name, labels, DROPPED_LABELS), value);
            }
        });
    }

    /** True for the metric names the sampler keeps (a cheap test made before a line is parsed). */
    static boolean wanted(String name) {
        return name.startsWith("pulsar_broadcast_") || TOPIC_STOCK.contains(name) || BROKER_STOCK.contains(name);
    }

    /** Counts the bytes read. Threading: the sampler thread. */
    private static final class Counting extends FilterInputStream {
        long count;

        Counting(InputStream in) {
            super(in);
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            if (b >= 0) {
                count++;
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = super.read(b, off, len);
            if (n > 0) {
                count += n;
            }
            return n;
        }
    }
}
