package io.github.pulsarbroadcast.it;

import static org.testng.Assert.assertEquals;

import java.util.List;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.testng.annotations.Test;

/**
 * A broker with stock's {@code lazyCursorRecovery=true}: when a topic is loaded, its cursors are recovered in the
 * background and are missing from the topic's subscriptions and from the managed ledger's list of cursors meanwhile,
 * so a broadcast subscribe that loads the topic finds neither. The subscription over the existing cursor must still
 * start from its saved positions (or the recovery window), not as a new one.
 */
public class BroadcastLazyCursorRecoveryTest extends BroadcastTestBase {

    @Override
    protected void configureBroker(ServiceConfiguration conf) {
        conf.setLazyCursorRecovery(true);
        conf.getProperties().setProperty("broadcastPositionSyncIntervalMs", "200");
    }

    /**
     * The consumer received three messages and acknowledged one; the topic is unloaded and the consumer's own
     * subscribe loads it again: the two it had not acknowledged come again.
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void unacknowledgedMessagesComeAgainAfterAReloadWithLazyCursorRecovery() throws Exception {
        for (int round = 0; round < 3; round++) {
            String topic = newTopic("lazy");
            Consumer<String> car = closeAfterTest(broadcastConsumer(topic, "fleet", "car"));
            List<String> sent;
            try (Producer<String> producer = producer(topic)) {
                sent = publish(producer, "m", 3);
            }
            List<Message<String>> got = takeAndAck(car, 3, 1);
            assertEquals(values(got), sent);
            cluster.admin().topics().unload(topic);
            assertEquals(receive(car, 2), sent.subList(1, 3), "round " + round + ": after the reload");
        }
    }
}
