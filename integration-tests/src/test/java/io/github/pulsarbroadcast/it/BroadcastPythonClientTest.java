package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
    private final ClientProcesses processes = new ClientProcesses();

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
                await().atMost(Duration.ofSeconds(60))
                        .until(() -> out.contains("READY") || ClientProcesses.failed(out));
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
        // the C++ client's own log lines are left out
        return processes.start(name, l -> l.contains(" INFO ") || l.contains(" WARN "), "python3",
                SCRIPT.toString(), cluster.serviceUrl(), topic, "fleet", name, String.valueOf(count));
    }

    @AfterMethod(alwaysRun = true)
    public void stopProcesses() {
        processes.stopAll();
    }
}
