package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Producer;
import org.testng.annotations.Test;

/** design.md, "Delivery guarantees" (at least once, bounded duplicates): after a broker restart every consumer
 * resumes at or before its last acknowledged position. */
public class BroadcastBrokerRestartTest extends BroadcastTestBase {

    @Override
    protected void configureBroker(ServiceConfiguration conf) {
        conf.getProperties().setProperty("broadcastMarkDeleteIntervalMs", "100");
    }

    @Test(groups = "integration", timeOut = 240_000)
    public void brokerRestartLosesNothing() throws Exception {
        String topic = newTopic("restart");
        List<Consumer<String>> consumers = broadcastConsumers(topic, "fleet", 3);
        try (Producer<String> producer = producer(topic)) {
            List<String> sent = new ArrayList<>(publish(producer, "m", 10));
            takeAndAck(consumers.get(0), 10, 10);
            takeAndAck(consumers.get(1), 10, 8);
            PositionImpl slowest = BroadcastReconnectTest.position(takeAndAck(consumers.get(2), 10, 3).get(2));
            await().atMost(Duration.ofSeconds(10)).until(() -> brokerSubscription(topic, "fleet").getCursor()
                    .getMarkDeletedPosition().equals(slowest));

            cluster.restartBroker(0);
            sent.addAll(publish(producer, "n", 10));

            ResumeChecks.assertResumedWithoutLoss(sent, 10, BroadcastReconnectTest.drain(consumers.get(0)), 7);
            ResumeChecks.assertResumedWithoutLoss(sent, 8, BroadcastReconnectTest.drain(consumers.get(1)), 5);
            ResumeChecks.assertResumedWithoutLoss(sent, 3, BroadcastReconnectTest.drain(consumers.get(2)), 0);
        } finally {
            closeAll(consumers);
        }
    }
}
