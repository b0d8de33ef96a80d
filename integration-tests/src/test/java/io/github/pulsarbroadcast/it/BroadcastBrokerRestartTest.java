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

/** design.md, "Delivery guarantees" and "Durable consumer positions": after a graceful broker restart every consumer
 * resumes at its own acknowledged position (saved when the topic closed), not at the slowest one's: no duplicates.
 * Before issue 13 the first two consumers got 7 and 5 messages again. */
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
            List<PositionImpl> acked = new ArrayList<>();
            acked.add(BroadcastReconnectTest.position(takeAndAck(consumers.get(0), 10, 10).get(9)));
            acked.add(BroadcastReconnectTest.position(takeAndAck(consumers.get(1), 10, 8).get(7)));
            acked.add(BroadcastReconnectTest.position(takeAndAck(consumers.get(2), 10, 3).get(2)));
            await().atMost(Duration.ofSeconds(10)).until(() -> brokerSubscription(topic, "fleet").getCursor()
                    .getMarkDeletedPosition().equals(acked.get(2)));
            // Every acknowledgement applied on the broker before the restart (the client groups them for 100 ms).
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                for (org.apache.pulsar.broker.service.Consumer c : dispatcher(topic, "fleet").getConsumers()) {
                    int i = Integer.parseInt(c.consumerName().substring(1));
                    if (!dispatcher(topic, "fleet").member(c).cursor().acknowledged().equals(acked.get(i))) {
                        return false;
                    }
                }
                return true;
            });

            cluster.restartBroker(0);
            sent.addAll(publish(producer, "n", 10));

            ResumeChecks.assertResumedWithoutLoss(sent, 10, BroadcastReconnectTest.drain(consumers.get(0)), 0);
            ResumeChecks.assertResumedWithoutLoss(sent, 8, BroadcastReconnectTest.drain(consumers.get(1)), 0);
            ResumeChecks.assertResumedWithoutLoss(sent, 3, BroadcastReconnectTest.drain(consumers.get(2)), 0);
        } finally {
            closeAll(consumers);
        }
    }
}
