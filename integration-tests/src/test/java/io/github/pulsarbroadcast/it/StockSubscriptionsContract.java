package io.github.pulsarbroadcast.it;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertNotNull;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionType;
import org.testng.annotations.Test;

/**
 * What stock Pulsar does must keep working whether or not the plugin is loaded: stock subscriptions receive every
 * message. Subclasses choose the broker (with or without the plugin).
 *
 * <p>Threading: TestNG's test thread only.
 */
public abstract class StockSubscriptionsContract extends BrokerTestBase {

    private static final int MESSAGES = 50;

    @Test(groups = "integration", timeOut = 60_000)
    public void sharedSubscriptionDeliversEveryMessage() throws Exception {
        assertEveryMessageDelivered(SubscriptionType.Shared);
    }

    @Test(groups = "integration", timeOut = 60_000)
    public void exclusiveSubscriptionDeliversEveryMessage() throws Exception {
        assertEveryMessageDelivered(SubscriptionType.Exclusive);
    }

    private void assertEveryMessageDelivered(SubscriptionType type) throws Exception {
        String topic = newTopic(type.name().toLowerCase());
        try (Consumer<String> consumer = client.newConsumer(Schema.STRING).topic(topic)
                .subscriptionName("stock-" + type).subscriptionType(type).subscribe();
             Producer<String> producer = client.newProducer(Schema.STRING).topic(topic).create()) {
            List<String> sent = new ArrayList<>();
            for (int i = 0; i < MESSAGES; i++) {
                String value = type + "-" + i;
                producer.send(value);
                sent.add(value);
            }
            List<String> received = new ArrayList<>();
            for (int i = 0; i < MESSAGES; i++) {
                Message<String> msg = consumer.receive(20, TimeUnit.SECONDS);
                assertNotNull(msg, "message " + i + " of " + MESSAGES + " not received");
                received.add(msg.getValue());
                consumer.acknowledge(msg);
            }
            assertEquals(received, sent);
        }
    }
}
