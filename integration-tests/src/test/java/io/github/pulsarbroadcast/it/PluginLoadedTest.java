package io.github.pulsarbroadcast.it;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertNotNull;

import io.github.pulsarbroadcast.broadcast.cnx.BroadcastServerCnx;
import org.apache.pulsar.broker.service.Topic;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;
import org.testng.annotations.Test;

/**
 * A stock broker with the plugin loaded from its NAR by configuration: the interceptor is active, client
 * connections are served by the plugin's connection handler, and stock subscriptions still work (inherited).
 */
public class PluginLoadedTest extends StockSubscriptionsContract {

    @Test(groups = "integration", timeOut = 60_000)
    public void interceptorIsLoadedFromTheNar() {
        assertNotNull(cluster.broker().getBrokerInterceptor(), "broker loaded no interceptor");
        assertNotNull(cluster.broker().getBrokerService().getInterceptor());
    }

    @Test(groups = "integration", timeOut = 60_000)
    public void connectionsAreServedByThePluginHandler() throws Exception {
        String topic = newTopic("cnx");
        try (Producer<String> producer = client.newProducer(Schema.STRING).topic(topic).create()) {
            Topic brokerTopic = cluster.broker().getBrokerService().getTopicReference(topic).orElseThrow();
            org.apache.pulsar.broker.service.Producer brokerProducer =
                    brokerTopic.getProducers().values().iterator().next();
            assertEquals(brokerProducer.getCnx().getClass(), BroadcastServerCnx.class);
            // Responses written while one read is handled go out in one flush (design.md, "How a stock broker loads
            // the plugin").
            assertEquals(((BroadcastServerCnx) brokerProducer.getCnx()).ctx().pipeline().names().get(0),
                    "consolidation");
            producer.send("hello");
        }
    }
}
