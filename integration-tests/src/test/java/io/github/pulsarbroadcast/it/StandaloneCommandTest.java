package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertNotNull;
import static org.testng.Assert.assertNull;
import static org.testng.Assert.assertTrue;

import io.github.pulsarbroadcast.standalone.FileTrees;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.testng.annotations.AfterClass;
import org.testng.annotations.Listeners;
import org.testng.annotations.Test;

/**
 * The README's first command, for real: {@code bin/pulsar-broadcast standalone} in its own process (here on
 * OS-assigned ports and a temporary data directory), reached by a Java client from this JVM, then stopped the way
 * Ctrl-C stops it (SIGTERM runs the same shutdown hook).
 *
 * <p>Threading: the test thread drives the process; one reader thread copies its output into {@link #output}.
 */
@Listeners(ThreadDumpOnTimeout.class)
public class StandaloneCommandTest {

    private static final Path SCRIPT = Path.of("..", "bin", "pulsar-broadcast").toAbsolutePath().normalize();

    private final List<String> output = new CopyOnWriteArrayList<>();
    private Process process;
    private Path dataDir;

    @Test(groups = "integration", timeOut = 300_000)
    public void standaloneServesAJavaClientAndStopsCleanly() throws Exception {
        dataDir = Files.createTempDirectory("standalone-test-");
        process = new ProcessBuilder(SCRIPT.toString(), "standalone", "--port", "0", "--web-port", "0",
                "--zookeeper-port", "0", "--bookie-port", "0", "--bind-address", "127.0.0.1",
                "--data-dir", dataDir.toString())
                .redirectErrorStream(true).start();
        Thread reader = new Thread(this::copyOutput, "standalone-output");
        reader.setDaemon(true);
        reader.start();

        await().atMost(Duration.ofSeconds(120)).until(() -> line("service URL:") != null || !process.isAlive());
        String serviceUrl = line("service URL:");
        assertNotNull(serviceUrl, "standalone did not start:\n" + String.join("\n", output));
        assertTrue(line("installed its connection handler") != null, "plugin not installed:\n" + output);

        try (PulsarClient client = PulsarClient.builder()
                .serviceUrl(serviceUrl.substring(serviceUrl.indexOf("pulsar://")).trim()).build();
             Consumer<String> consumer = client.newConsumer(Schema.STRING)
                     .topic("persistent://public/default/standalone-smoke").subscriptionName("smoke").subscribe();
             Producer<String> producer = client.newProducer(Schema.STRING)
                     .topic("persistent://public/default/standalone-smoke").create()) {
            producer.send("hello standalone");
            Message<String> msg = consumer.receive(30, TimeUnit.SECONDS);
            assertNotNull(msg);
            assertEquals(msg.getValue(), "hello standalone");
        }
        String adminUrl = line("admin URL:");
        assertNotNull(adminUrl, String.join("\n", output));
        servesBroadcastWithMetricsAndListing(serviceUrl.substring(serviceUrl.indexOf("pulsar://")).trim(),
                adminUrl.substring(adminUrl.indexOf("http://")).trim());

        // SIGTERM, as Ctrl-C's sibling; Process.destroy() would also close our end of the pipe and lose the
        // shutdown message. The standalone bounds its own stop (90 s, then it prints every thread's stack and halts).
        process.toHandle().destroy();
        boolean stopped = process.waitFor(120, TimeUnit.SECONDS);
        assertTrue(stopped, stopped ? "" : "standalone did not stop on SIGTERM within 120 s; its closing threads:\n"
                + closingThreads(jcmdThreadDump()) + "\nits last output:\n" + tail(60));
        reader.join(TimeUnit.SECONDS.toMillis(10)); // the last lines may still be in the pipe
        assertNotNull(line("Stopping pulsar-broadcast standalone"),
                "no clean shutdown (exit code " + process.exitValue() + "):\n" + tail(60));
        assertNull(line("Stopping took more than"), "the standalone's stop hung and it halted; its closing threads:\n"
                + closingThreads(String.join("\n", linesFrom("Stopping took more than", Integer.MAX_VALUE))));
        assertNull(line("did not close within"), "a broker's close hung:\n" + linesFrom("did not close within", 80));
        assertNull(line("Closing broker"), "the broker's close failed:\n" + linesFrom("Closing broker", 20));
        assertNotNull(line("Stopped in"), "the stop failed:\n" + tail(60));
        System.out.println("StandaloneCommandTest: " + line("Stopped in").trim()); // README's stop time, as measured
        // With brokerShutdownTimeoutMs=0 the broker stopped its event loops before closing the BookKeeper channels on
        // them (about 30 such lines at every stop), the state in which a channel's close can wait for ever
        // (apache/pulsar#15650); the standalone's 20 s gives the loops a quiet period.
        assertNull(line("Event loop shut down?"), "channels closed on stopped event loops:\n"
                + linesFrom("Event loop shut down?", 20));
    }

    /**
     * Issue 14's "works on the standalone": a broadcast consumer served, the plugin's metrics on the broker's own
     * {@code /metrics}, and the consumer listing through {@code bin/pulsar-broadcast consumers}, as an operator runs
     * it.
     */
    private void servesBroadcastWithMetricsAndListing(String serviceUrl, String webUrl) throws Exception {
        String topic = "persistent://public/default/standalone-broadcast";
        try (PulsarClient client = PulsarClient.builder().serviceUrl(serviceUrl).build();
             Consumer<String> car = io.github.pulsarbroadcast.broadcast.client.Broadcast.configure(
                     client.newConsumer(Schema.STRING).topic(topic).subscriptionName("fleet").consumerName("car-1"))
                     .subscribe();
             Producer<String> producer = client.newProducer(Schema.STRING).topic(topic).create()) {
            producer.send("road damage");
            Message<String> msg = car.receive(30, TimeUnit.SECONDS);
            assertNotNull(msg);
            car.acknowledge(msg);
            String series = "topic=\"" + topic + "\",subscription=\"fleet\"} ";
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertTrue(httpGet(webUrl + "/metrics/")
                    .lines().anyMatch(l -> l.startsWith("pulsar_broadcast_messages_delivered_total{")
                            && l.contains(series) && Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)) == 1),
                    "no delivery counted in /metrics"));
            Path out = Files.createTempFile("consumers-command-", ".txt");
            Process listing = new ProcessBuilder(SCRIPT.toString(), "consumers", "--web-url", webUrl, "--topic", topic,
                    "--subscription", "fleet", "--json").redirectErrorStream(true).redirectOutput(out.toFile()).start();
            boolean ended = listing.waitFor(60, TimeUnit.SECONDS);
            if (!ended) {
                listing.destroyForcibly();
            }
            String answer = Files.readString(out);
            Files.deleteIfExists(out);
            assertTrue(ended, "consumers command did not end: " + answer);
            assertEquals(listing.exitValue(), 0, answer);
            assertTrue(answer.contains("\"car-1\""), "car-1 not listed: " + answer);
        }
    }

    private static String httpGet(String url) throws Exception {
        java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newHttpClient().send(
                java.net.http.HttpRequest.newBuilder(java.net.URI.create(url)).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        assertEquals(r.statusCode(), 200, url);
        return r.body();
    }

    /** A thread dump of the standalone taken with {@code jcmd Thread.print}, also kept in {@code target/}. */
    private String jcmdThreadDump() {
        try {
            Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
            Path file = Path.of("target", "standalone-sigterm-threads.txt");
            Process p = new ProcessBuilder(jcmd.toString(), Long.toString(process.pid()), "Thread.print")
                    .redirectErrorStream(true).redirectOutput(file.toFile()).start();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
            return Files.readString(file);
        } catch (IOException | RuntimeException e) {
            return "(no thread dump: " + e + ")";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "(interrupted)";
        }
    }

    /** From a thread dump (one blank line between threads), the stacks of the threads that run the stop. */
    private static String closingThreads(String dump) {
        return java.util.Arrays.stream(dump.split("\n\\s*\n"))
                .filter(t -> t.startsWith("\"standalone-shutdown\"") || t.startsWith("\"embedded-pulsar-close")
                        || t.startsWith("\"main\""))
                .collect(java.util.stream.Collectors.joining("\n\n"));
    }

    /** The first line holding {@code marker} and at most {@code max - 1} lines after it. */
    private List<String> linesFrom(String marker, int max) {
        List<String> copy = List.copyOf(output);
        int from = 0;
        while (from < copy.size() && !copy.get(from).contains(marker)) {
            from++;
        }
        return copy.subList(from, (int) Math.min(copy.size(), (long) from + max));
    }

    private String tail(int lines) {
        List<String> copy = List.copyOf(output);
        return String.join("\n", copy.subList(Math.max(0, copy.size() - lines), copy.size()));
    }

    /**
     * The script's own {@code --version}, as every command's (regression, forty-fourth session: the script answered
     * "Unknown command '--version'" with status 2).
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void theScriptPrintsItsVersion() throws Exception {
        Process version = new ProcessBuilder(SCRIPT.toString(), "--version").redirectErrorStream(true).start();
        String out = new String(version.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(version.waitFor(60, TimeUnit.SECONDS), out);
        assertEquals(version.exitValue(), 0, out);
        assertTrue(out.startsWith("pulsar-broadcast 2.10.5"), out);
    }

    private String line(String marker) {
        return output.stream().filter(l -> l.contains(marker)).findFirst().orElse(null);
    }

    private void copyOutput() {
        try (BufferedReader in = new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            for (String l = in.readLine(); l != null; l = in.readLine()) {
                output.add(l);
            }
        } catch (IOException e) {
            // The process ended.
        }
    }

    @AfterClass(alwaysRun = true)
    public void stopProcess() throws Exception {
        if (process != null && process.isAlive()) {
            process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
        if (!output.isEmpty()) {
            Files.write(Path.of("target", "standalone-command-output.txt"), output);
        }
        if (dataDir != null) {
            FileTrees.deleteQuietly(dataDir);
        }
    }
}
