package io.github.pulsarbroadcast.broadcast.cnx;

import io.github.pulsarbroadcast.broadcast.dispatch.SubscriptionInstaller;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.pulsar.broker.service.BrokerService;
import org.apache.pulsar.broker.service.ServerCnx;
import org.apache.pulsar.broker.service.Topic;
import org.apache.pulsar.broker.service.persistent.PersistentSubscription;
import org.apache.pulsar.broker.service.persistent.PersistentTopic;
import org.apache.pulsar.common.api.proto.CommandSubscribe;
import org.apache.pulsar.common.naming.TopicName;

/**
 * What {@link BroadcastServerCnx} needs of the broker's topics before a subscribe reaches the stock subscribe path:
 * whether a loaded topic holds a subscription by that name, and, for the first broadcast subscribe of a subscription
 * on this broker (after the consumer was authorized), the topic found or created and the broadcast subscription
 * installed in it. The connection continues on its event loop.
 *
 * <p>Threading: stateless apart from the final fields; its futures complete on the broker's threads.
 */
final class SubscribePreparation {

    private final ServerCnx cnx;
    private final SubscriptionInstaller installer;

    SubscribePreparation(ServerCnx cnx, SubscriptionInstaller installer) {
        this.cnx = cnx;
        this.installer = installer;
    }

    /** Finds or creates the topic as the stock path would, and installs the broadcast subscription in it. */
    CompletableFuture<Void> install(TopicName topicName, CommandSubscribe copy) {
        BrokerService brokerService = cnx.getBrokerService();
        boolean createTopic = copy.isForceTopicCreation() && brokerService.isAllowAutoTopicCreation(topicName);
        return brokerService.getTopic(topicName.toString(), createTopic).thenCompose((Optional<Topic> topic) -> {
            if (topic.isEmpty() || !(topic.get() instanceof PersistentTopic)) {
                return CompletableFuture.completedFuture(null); // the stock path reports the missing topic
            }
            Map<String, String> properties = new HashMap<>();
            copy.getSubscriptionPropertiesList().forEach(kv -> properties.put(kv.getKey(), kv.getValue()));
            return installer.install((PersistentTopic) topic.get(), copy.getSubscription(), copy.getInitialPosition(),
                    properties, brokerService.isAllowAutoSubscriptionCreation(topicName));
        });
    }

    /**
     * The subscription {@code subscription} of {@code topic} when the topic is a persistent topic already loaded on
     * this broker, else null.
     */
    PersistentSubscription loadedSubscription(TopicName topic, String subscription) {
        Optional<Topic> loaded = cnx.getBrokerService().getTopicReference(topic.toString());
        return loaded.isPresent() && loaded.get() instanceof PersistentTopic
                ? ((PersistentTopic) loaded.get()).getSubscriptions().get(subscription) : null;
    }

    /** The persistent topic named {@code topic}; null for an invalid or a non-persistent name. */
    static TopicName persistentTopicName(String topic) {
        try {
            TopicName name = TopicName.get(topic);
            return name.isPersistent() ? name : null;
        } catch (RuntimeException e) {
            return null;
        }
    }
}
