package io.github.pulsarbroadcast.cluster;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertTrue;

import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.testng.annotations.AfterClass;
import org.testng.annotations.BeforeClass;
import org.testng.annotations.DataProvider;
import org.testng.annotations.Test;

/**
 * {@code bin/pulsar-broadcast cluster up|status|down} with a real cluster: every process up on its own ports with its
 * own log, the plugin loaded on both brokers from what install-plugin.sh installed, the topic's owner shown, a
 * broadcast subscription served through either broker; a broker with a broken {@code broadcast*} key stops at start
 * with a message that names the key; down leaves no process behind.
 *
 * <p>Threading: TestNG's test thread only; the tests run in priority order on one cluster.
 */
@Test(groups = "cluster")
public class ClusterCommandTest {

    private final ClusterCommand cluster = ClusterCommand.inTarget("command");

    @BeforeClass(alwaysRun = true, timeOut = 600_000)
    public void up() {
        ClusterCommand.Result r = cluster.up();
        assertTrue(r.output.contains("broker-2 serves"), r.output);
    }

    @AfterClass(alwaysRun = true, timeOut = 300_000)
    public void down() throws Exception {
        List<Long> running = new ArrayList<>();
        for (String node : cluster.env().get("NODES").split(",")) {
            Path pidFile = cluster.dir().resolve(node).resolve("pid");
            if (cluster.alive(node)) {
                running.add(Long.parseLong(Files.readString(pidFile).trim()));
            }
        }
        ClusterCommand.Result r = cluster.down();
        assertEquals(r.exitCode, 0, r.toString());
        assertEquals(running.size(), 6, "processes running before down: " + running);
        for (long pid : running) {
            // A process the command saw exit may linger for a moment until its parent (init) reaps it.
            await("pid " + pid + " gone").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                    .until(() -> !ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false));
        }
    }

    @Test(timeOut = 120_000, priority = 1)
    public void statusShowsEveryProcessItsPortsAndTheOwner() throws Exception {
        String topic = "persistent://public/default/status-owner";
        ClusterCommand.Result r = cluster.status("--topic", topic);
        for (String node : cluster.env().get("NODES").split(",")) {
            String line = r.output.lines().filter(l -> l.startsWith(node + " ")).findFirst().orElseThrow(
                    () -> new AssertionError(node + " missing from status:\n" + r.output));
            assertTrue(line.contains(" running "), line);
            Path pidFile = cluster.dir().resolve(node).resolve("pid");
            long pid = Long.parseLong(Files.readString(pidFile).trim());
            assertTrue(line.contains(" " + pid + " "), line);
            assertTrue(Files.exists(cluster.log(node)), "no log " + cluster.log(node));
            if (node.startsWith("broker-")) {
                assertTrue(line.contains(" loaded "), line);
                assertTrue(line.contains(cluster.env().get(ClusterCommand.envKey(node, "PORT")) + " pulsar"), line);
            }
        }
        assertTrue(r.output.matches("(?s).*topic " + topic + " is owned by broker-[12] \\(pulsar://127\\.0\\.0\\.1:"
                + "[0-9]+\\).*"), r.output);
        // 'owner' names the same broker alone on its line, for scripts (a kill of the owner).
        ClusterCommand.Result owner = cluster.run("owner", "--topic", topic);
        assertEquals(owner.exitCode, 0, owner.toString());
        assertTrue(r.output.contains("is owned by " + owner.output.strip() + " ("), owner + "\n" + r.output);
        ClusterCommand.Result noTopic = cluster.run("owner");
        assertEquals(noTopic.exitCode, 1, noTopic.toString());
        assertTrue(noTopic.output.contains("owner needs --topic TOPIC"), noTopic.toString());
        // Both brokers are laid out like a Pulsar distribution, with what install-plugin.sh put there.
        for (String broker : cluster.brokers()) {
            Path home = cluster.dir().resolve(broker);
            assertTrue(Files.exists(home.resolve("interceptors/broadcast-subscription.nar")), broker);
            assertTrue(Files.readString(home.resolve("conf/broker.conf")).contains("# >>> pulsar-broadcast"), broker);
            assertTrue(Files.exists(home.resolve("lib/org.apache.pulsar-pulsar-broker-2.10.5.jar")), broker);
        }
    }

    @Test(timeOut = 120_000, priority = 2)
    public void servesABroadcastSubscriptionThroughEitherBroker() throws Exception {
        String topic = "persistent://public/default/served";
        List<Consumer<String>> consumers = new ArrayList<>();
        try (PulsarClient client = PulsarClient.builder().serviceUrl(cluster.serviceUrl()).build()) {
            for (int i = 0; i < 3; i++) {
                consumers.add(Broadcast.configure(client.newConsumer(Schema.STRING)).topic(topic)
                        .subscriptionName("alerts").consumerName("vehicle-" + i).subscribe());
            }
            try (Producer<String> producer = client.newProducer(Schema.STRING).topic(topic).create()) {
                for (int m = 0; m < 5; m++) {
                    producer.send("road damage at km " + m);
                }
            }
            for (Consumer<String> c : consumers) {
                for (int m = 0; m < 5; m++) {
                    Message<String> msg = c.receive(30, TimeUnit.SECONDS);
                    assertEquals(msg == null ? null : msg.getValue(), "road damage at km " + m, c.getConsumerName());
                    c.acknowledge(msg);
                }
            }
        }
    }

    /** A bad value, and a misspelt key (which must not fall back to a default silently). */
    @DataProvider
    public Object[][] brokenKeys() {
        return new Object[][] {
            {"broadcastWindowMaxEntries=lots",
                "broadcastWindowMaxEntries=lots is not allowed: use a whole number from 1 to 1000000"},
            {"broadcastWindowMaxEntrys=1000",
                "Unknown pulsar-broadcast configuration key 'broadcastWindowMaxEntrys'; known keys: broadcastEnabled"},
        };
    }

    @Test(timeOut = 300_000, priority = 3, dataProvider = "brokenKeys")
    public void aBrokenBroadcastKeyStopsTheBrokerWithAClearMessage(String line, String message) throws Exception {
        Path conf = cluster.dir().resolve("broker-2/conf/broker.conf");
        byte[] original = Files.readAllBytes(conf);
        cluster.stop("broker-2");
        try {
            Files.write(conf, (line + "\n").getBytes(StandardCharsets.UTF_8), StandardOpenOption.APPEND);
            ClusterCommand.Result r = cluster.run("start", "broker-2");
            assertEquals(r.exitCode, 1, r.toString());
            assertTrue(r.output.contains("broker-2 exited during start-up"), r.output);
            // The command shows the broker log's error lines: the key, its value and what is allowed.
            assertTrue(r.output.contains(message), r.output);
            assertFalse(cluster.alive("broker-2"));
        } finally {
            Files.write(conf, original);
        }
        cluster.start("broker-2");
        assertTrue(cluster.alive("broker-2"));
    }
}
