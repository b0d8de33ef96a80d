package io.github.pulsarbroadcast.it;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertNull;
import static org.testng.Assert.assertTrue;

import org.apache.pulsar.broker.service.ServerCnx;
import org.apache.pulsar.broker.service.Topic;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionType;
import org.testng.annotations.Test;

/**
 * The same harness with the plugin switched off: a plain stock broker starts and serves clients, and stock
 * subscriptions work (inherited). Guards against the harness depending on the plugin.
 */
public class PluginAbsentTest extends StockSubscriptionsContract {

    @Override
    protected boolean withPlugin() {
        return false;
    }

    @Test(groups = "integration", timeOut = 60_000)
    public void brokerRunsWithoutAnyInterceptor() throws Exception {
        assertNull(cluster.broker().getBrokerInterceptor());
        String topic = newTopic("stock-cnx");
        try (Producer<String> producer = client.newProducer(Schema.STRING).topic(topic).create()) {
            Topic brokerTopic = cluster.broker().getBrokerService().getTopicReference(topic).orElseThrow();
            assertEquals(brokerTopic.getProducers().values().iterator().next().getCnx().getClass(), ServerCnx.class);
            producer.send("hello");
        }
    }

    /** operations.md: a broker without the plugin has none of the plugin's series (and stock's are there). */
    @Test(groups = "integration", timeOut = 60_000)
    public void noBroadcastSeriesWithoutThePlugin() throws Exception {
        String topic = newTopic("stock-metrics");
        try (Consumer<String> consumer = client.newConsumer(Schema.STRING).topic(topic).subscriptionName("fleet")
                .subscriptionType(SubscriptionType.Failover).subscribe()) {
            String body = Scrapes.get(cluster.webServiceUrl(), "/metrics/");
            assertTrue(body.contains("pulsar_subscriptions_count{"), "stock's series are written");
            assertFalse(body.contains("pulsar_broadcast_"), "no series of the plugin");
        }
    }
}
