package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Producer;
import org.testng.SkipException;
import org.testng.annotations.AfterMethod;
import org.testng.annotations.Test;

/**
 * Any Pulsar client can use a broadcast subscription: two consumers written with the Python client (its C++ core,
 * which has no subscription properties) join with the consumer property, next to a Java consumer, and each receives
 * every message in order. Needs {@code pip install pulsar-client}; {@code .ci/run} installs it.
 *
 * <p>Threading: the test thread drives the processes; one reader thread per process collects its output.
 */
public class BroadcastPythonClientTest extends BroadcastTestBase {

    private static final Path SCRIPT = Path.of("src", "test", "python", "broadcast_consumer.py").toAbsolutePath();
    private final List<Process> processes = new ArrayList<>();

    @Test(groups = "integration", timeOut = 180_000)
    public void pythonConsumersReceiveEveryMessageInOrder() throws Exception {
        requirePythonClient();
        String topic = newTopic("python");
        int count = 20;
        // The subscription is created by a Java consumer first, then the Python ones join it.
        try (org.apache.pulsar.client.api.Consumer<String> java = broadcastConsumer(topic, "fleet", "java");
             Producer<String> producer = producer(topic)) {
            List<List<String>> outputs = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                outputs.add(start(topic, "python-" + i, count));
            }
            for (List<String> out : outputs) {
                await().atMost(Duration.ofSeconds(60)).until(() -> out.contains("READY") || out.stream()
                        .anyMatch(l -> l.contains("Error") || l.contains("Traceback")));
                assertEquals(out.get(0), "READY", "python consumer failed: " + out);
            }
            List<String> sent = publish(producer, "alert", count);
            assertEquals(receive(java, count), sent);
            for (List<String> out : outputs) {
                await().atMost(Duration.ofSeconds(60)).until(() -> out.contains("DONE"));
                assertEquals(out.subList(1, 1 + count), sent);
            }
            assertEquals(brokerSubscription(topic, "fleet").getConsumers().size(), 1, "python consumers closed");
        }
    }

    private static void requirePythonClient() throws Exception {
        Process check = new ProcessBuilder("python3", "-c", "import pulsar").redirectErrorStream(true).start();
        if (!check.waitFor(60, TimeUnit.SECONDS) || check.exitValue() != 0) {
            throw new SkipException("The Python Pulsar client is not installed: pip install pulsar-client");
        }
    }

    private List<String> start(String topic, String name, int count) throws IOException {
        Process p = new ProcessBuilder("python3", SCRIPT.toString(), cluster.serviceUrl(), topic, "fleet", name,
                String.valueOf(count)).redirectErrorStream(true).start();
        processes.add(p);
        List<String> lines = new CopyOnWriteArrayList<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String l = in.readLine(); l != null; l = in.readLine()) {
                    if (!l.contains(" INFO ") && !l.contains(" WARN ")) { // the C++ client's own log lines
                        lines.add(l.trim());
                    }
                }
            } catch (IOException e) {
                // process ended
            }
        }, "python-" + name);
        reader.setDaemon(true);
        reader.start();
        return lines;
    }

    @AfterMethod(alwaysRun = true)
    public void stopProcesses() {
        for (Process p : processes) {
            p.destroyForcibly();
        }
        processes.clear();
    }
}
