package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Producer;
import org.testng.annotations.Test;

/**
 * {@code broadcastConsumerRetentionSeconds=0} (a disconnect drops the position at once) across a topic move:
 * design.md, "Durable consumer positions": restored positions are kept at least {@code broadcastReconnectGraceSeconds},
 * whatever the retention, so a consumer that was connected when its topic moved resumes its own position when its
 * client reconnects instead of starting again as a new name at the tail (which, with this retention, dropped them as
 * soon as they were restored; a review-fixes row).
 *
 * <p>Threading: TestNG's test thread only.
 */
public class BroadcastNoRetentionTest extends BroadcastTestBase {

    @Override
    protected void configureBroker(ServiceConfiguration conf) {
        conf.getProperties().setProperty("broadcastConsumerRetentionSeconds", "0");
        conf.getProperties().setProperty("broadcastReconnectGraceSeconds", "30");
        conf.getProperties().setProperty("broadcastPositionSyncIntervalMs", "200");
        conf.getProperties().setProperty("broadcastMarkDeleteIntervalMs", "100");
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void aConsumerConnectedAcrossAMoveResumesItsPositionWithoutRetention() throws Exception {
        String topic = newTopic("no-retention");
        Consumer<String> car = closeAfterTest(broadcastConsumer(topic, "fleet", "car"));
        try (Producer<String> producer = producer(topic)) {
            List<String> sent = new ArrayList<>(publish(producer, "m", 10));
            takeAndAck(car, 10, 3);
            await().atMost(Duration.ofSeconds(20)).until(() -> dispatcher(topic, "fleet") != null
                    && brokerSubscription(topic, "fleet").getCursor().getMarkDeletedPosition().getEntryId() >= 2);
            cluster.admin().topics().unload(topic);
            await().atMost(Duration.ofSeconds(30)).until(car::isConnected);
            sent.addAll(publish(producer, "n", 5));
            List<String> received = BroadcastReconnectTest.drain(car);
            ResumeChecks.assertResumedWithoutLoss(sent, 3, received, 0);
            assertEquals(received.size(), 12, "m-3 to m-9 again (unacknowledged), then n-0 to n-4: " + received);
        }
    }
}
