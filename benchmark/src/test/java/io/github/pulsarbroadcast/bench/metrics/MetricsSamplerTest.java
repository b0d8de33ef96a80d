package io.github.pulsarbroadcast.bench.metrics;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertNotNull;
import static org.testng.Assert.assertTrue;

import com.sun.net.httpserver.HttpServer;
import io.github.pulsarbroadcast.standalone.FileTrees;
import java.awt.image.BufferedImage;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import javax.imageio.ImageIO;
import org.testng.annotations.AfterMethod;
import org.testng.annotations.BeforeMethod;
import org.testng.annotations.Test;

/**
 * {@link MetricsSampler} against a local HTTP server that serves {@link SampleMetrics} bodies (a step further at
 * every request, the third request failing with HTTP 500), then the dashboard PNG of what it kept and the
 * {@code dashboard} command on the saved series.
 *
 * <p>Threading: TestNG's test thread; the JDK's HTTP server serves on its own thread, the sampler scrapes on its own.
 */
@Test(groups = "unit")
public class MetricsSamplerTest {

    private HttpServer server;
    private final AtomicInteger requests = new AtomicInteger();
    private Path dir;

    @BeforeMethod(alwaysRun = true)
    public void start() throws Exception {
        requests.set(0);
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/metrics/", exchange -> {
            int k = requests.getAndIncrement();
            byte[] body = SampleMetrics.body(k).getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(k == 2 ? 500 : 200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
        dir = Files.createTempDirectory("bench-metrics-");
    }

    @AfterMethod(alwaysRun = true)
    public void stop() throws Exception {
        server.stop(0);
        FileTrees.deleteQuietly(dir);
    }

    @Test(timeOut = 60_000)
    public void aScrapeUnderWayWhenTheRunFinishesIsKept() throws Exception {
        java.util.concurrent.CountDownLatch inFlight = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        server.removeContext("/metrics/");
        server.createContext("/metrics/", exchange -> {
            int k = requests.getAndIncrement();
            if (k == 1) {
                inFlight.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            byte[] body = SampleMetrics.body(k).getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        String url = MetricsSampler.metricsUrl("http://127.0.0.1:" + server.getAddress().getPort() + "/");
        MetricsSampler sampler = MetricsSampler.start(url, SampleMetrics.TOPIC, "finish", 0.05, java.util.Map::of);
        try {
            assertTrue(inFlight.await(30, java.util.concurrent.TimeUnit.SECONDS));
            java.util.concurrent.CompletableFuture<MetricsSeries> finished =
                    java.util.concurrent.CompletableFuture.supplyAsync(sampler::finish);
            await().atMost(Duration.ofSeconds(10)).until(sampler::isStopping);
            release.countDown();
            MetricsSeries series = finished.get(30, java.util.concurrent.TimeUnit.SECONDS);
            assertEquals(series.scrapes.size(), 3, "the first, the one under way, the last");
            for (MetricsSeries.Scrape s : series.scrapes) {
                assertEquals(s.error, null, "no scrape cut short");
            }
        } finally {
            release.countDown();
            sampler.close();
        }
    }

    @Test(timeOut = 60_000)
    public void samplesTheRunsTopicRendersTheDashboardAndRendersItAgain() throws Exception {
        String url = MetricsSampler.metricsUrl("http://127.0.0.1:" + server.getAddress().getPort() + "/");
        java.util.concurrent.atomic.AtomicInteger localReads = new java.util.concurrent.atomic.AtomicInteger();
        MetricsSampler sampler = MetricsSampler.start(url, SampleMetrics.TOPIC, "broadcast N=20", 0.1,
                () -> java.util.Map.of(MetricsSampler.MACHINE_BUSY, (double) localReads.incrementAndGet(),
                        MetricsSampler.MACHINE_STOLEN, 0.5));
        long t0 = System.nanoTime();
        await().atMost(Duration.ofSeconds(30)).until(() -> requests.get() >= 6);
        sampler.window(t0, System.nanoTime());
        MetricsSeries series = sampler.finish();
        int scrapes = series.scrapes.size();
        assertTrue(scrapes >= 7, "scrapes: " + scrapes);
        MetricsSeries.Scrape failed = series.scrapes.get(2);
        assertEquals(failed.error, "HTTP 500");
        assertEquals(failed.values.keySet(), java.util.Set.of(MetricsSampler.MACHINE_BUSY,
                MetricsSampler.MACHINE_STOLEN), "a failed scrape keeps only the benchmark's own samples");
        assertEquals(failed.values.get(MetricsSampler.MACHINE_BUSY), 3.0, "read once per scrape, at its start");
        MetricsSeries.Scrape last = series.scrapes.get(scrapes - 1);
        assertTrue(last.bytes > 1000, "body bytes counted");
        assertEquals(last.values.get("pulsar_broadcast_consumers{state=\"waiting\",subscription=\"broadcast\"}"),
                18.0, "cluster, namespace and topic dropped from the key; the other topic's 999 left out");
        assertEquals(last.values.get("pulsar_rate_in"), 10.0, "the stock metric of this topic only");
        assertEquals(last.values.get("jvm_memory_bytes_used{area=\"heap\"}"), 1.2e8);
        assertFalse(last.values.containsKey("jvm_memory_bytes_used{area=\"nonheap\"}"));
        assertFalse(last.values.keySet().stream().anyMatch(k -> k.startsWith("jvm_threads")), "not wanted");
        assertEquals(last.values.get(MetricsSampler.MACHINE_BUSY), (double) scrapes);
        StageBreakdown b = StageBreakdown.of(series);
        assertTrue(b.present);
        assertEquals(b.failedScrapes, 1);
        assertEquals(b.stages.get(0).p50, 3.0, 1e-9);

        Path file = dir.resolve("metrics").resolve("broadcast-N20.json");
        Files.createDirectories(file.getParent());
        series.write(file);
        Path png = dir.resolve("first.png");
        DashboardImage.render(MetricsSeries.read(file), png);
        BufferedImage image = ImageIO.read(png.toFile());
        assertNotNull(image);
        assertEquals(image.getWidth(), 3 * 640);

        int exit = new picocli.CommandLine(new DashboardCommand()).execute(dir.toString());
        assertEquals(exit, 0);
        assertTrue(Files.size(dir.resolve("dashboard-broadcast-N20.png")) > 10_000,
                "rendered again next to metrics/");
    }

    @Test(timeOut = 10_000)
    public void dashboardCommandWritesNextToTheResultsFolderOrWhereAsked() {
        DashboardCommand c = new DashboardCommand();
        Path series = Path.of("/r/metrics/broadcast-N20.json");
        assertEquals(c.target(series), Path.of("/r/dashboard-broadcast-N20.png"));
        assertEquals(c.target(Path.of("/x/s.json")), Path.of("/x/dashboard-s.png"));
        c.out = Path.of("/o");
        assertEquals(c.target(series), Path.of("/o/dashboard-broadcast-N20.png"));
        c.out = Path.of("/o/d.png");
        assertEquals(c.target(series), Path.of("/o/d.png"));
        assertEquals(new picocli.CommandLine(new DashboardCommand()).execute(dir.toString()), 2, "no series files");
    }

    @Test(timeOut = 30_000)
    public void anUnreachableBrokerGivesFailedScrapesNotAnException() throws Exception {
        MetricsSampler sampler = MetricsSampler.start("http://127.0.0.1:1/metrics/", SampleMetrics.TOPIC, "x", 0.1,
                java.util.Map::of);
        MetricsSeries series = sampler.finish();
        assertTrue(series.scrapes.size() >= 1);
        assertNotNull(series.scrapes.get(series.scrapes.size() - 1).error);
        StageBreakdown b = StageBreakdown.of(series);
        assertFalse(b.present);
        Path png = dir.resolve("empty.png");
        DashboardImage.render(series, png);
        assertTrue(Files.size(png) > 0, "a dashboard of empty panels all the same");
    }
}
