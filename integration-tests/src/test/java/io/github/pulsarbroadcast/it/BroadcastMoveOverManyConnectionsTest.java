package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;

import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.testng.annotations.Test;

/**
 * After a topic move, the consumers of one broadcast subscription come back over many connections at once; the broker
 * must load the subscription's saved positions once, not once per connection. Regression test of the topic move with
 * 100,000 fleet consumers over 1,000 connections (docs/benchmarks.md, "Reconnect storm"): each connection had its own
 * installer, hundreds of them loaded the 3.6 MB snapshot together, and all but the first failed their take-over of
 * the saved positions ("No saved consumer positions (reading them failed: ... BadVersion)"; since the forty-second
 * session a failed load refuses the subscribe instead: "Could not read the saved consumer positions").
 *
 * <p>Threading: TestNG's test thread; the log watch collects on the broker's threads.
 */
public class BroadcastMoveOverManyConnectionsTest extends BroadcastTestBase {

    private static final int CONNECTIONS = 30;

    @Test(groups = "integration", timeOut = 180_000)
    public void subscribesOverManyConnectionsAfterAMoveLoadTheSavedPositionsOnce() throws Exception {
        String topic = newTopic("many-connections");
        List<PulsarClient> clients = new ArrayList<>();
        List<Consumer<String>> consumers = new ArrayList<>();
        try (LogLines installs = LogLines.watch("io.github.pulsarbroadcast", "Broadcast subscription installed");
             LogLines failedLoads = LogLines.watch("io.github.pulsarbroadcast", "Could not read the saved consumer")) {
            for (int i = 0; i < CONNECTIONS; i++) {
                PulsarClient c = newClient();
                clients.add(c);
                consumers.add(Broadcast.configure(c.newConsumer(Schema.STRING)).topic(topic)
                        .subscriptionName("fleet").consumerName("car-" + i).subscribe());
            }
            int before = installs.lines().size();
            cluster.admin().topics().unload(topic);
            // Installed again (the clients may not have heard of the unload yet when it returns), then everyone back.
            await("the subscription installed again").atMost(Duration.ofSeconds(60))
                    .until(() -> installs.lines().size() > before);
            await("every consumer subscribed again").atMost(Duration.ofSeconds(60))
                    .until(() -> consumers.stream().allMatch(Consumer::isConnected));
            List<String> after = installs.lines().subList(before, installs.lines().size());
            assertEquals(after.size(), 1, "installations after the move: " + after);
            assertEquals(failedLoads.lines(), List.of(), "loads of the saved positions that failed");
        } finally {
            for (Consumer<String> c : consumers) {
                c.close();
            }
            for (PulsarClient c : clients) {
                c.close();
            }
        }
    }
}
