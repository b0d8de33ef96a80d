package io.github.pulsarbroadcast.it;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertNull;

import org.apache.pulsar.broker.service.ServerCnx;
import org.apache.pulsar.broker.service.Topic;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;
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
}
