package io.github.pulsarbroadcast.broadcast.cnx;

import io.github.pulsarbroadcast.broadcast.dispatch.SubscriptionInstaller;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.apache.pulsar.broker.service.BrokerService;
import org.apache.pulsar.broker.service.ServerCnx;
import org.apache.pulsar.broker.service.Topic;
import org.apache.pulsar.broker.service.persistent.PersistentSubscription;
import org.apache.pulsar.broker.service.persistent.PersistentTopic;
import org.apache.pulsar.broker.service.schema.exceptions.SchemaException;
import org.apache.pulsar.common.api.proto.CommandSubscribe;
import org.apache.pulsar.common.api.proto.Schema;
import org.apache.pulsar.common.naming.Metadata;
import org.apache.pulsar.common.naming.TopicName;
import org.apache.pulsar.common.protocol.Commands;
import org.apache.pulsar.common.protocol.schema.SchemaData;
import org.apache.pulsar.common.util.FutureUtil;

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

    /**
     * Finds or creates the topic as the stock path would, and installs the broadcast subscription in it, unless the
     * stock path will refuse the consumer before it would create a subscription: consumer metadata over
     * {@code maxConsumerMetadataSize} (before the topic is looked up, as stock checks it), or a schema the topic does
     * not accept (checked, and added to an idle topic, as stock does just before it subscribes, and only when the
     * subscription exists or may be created: stock refuses a missing one first). Then nothing is installed and the
     * stock path refuses it with its own error (regression, fortieth session, found by a review: the subscription was
     * created first). A schema check that fails otherwise fails the subscribe.
     * {@code schemaUser} is who a schema added here is recorded for, as stock records it (the original principal).
     */
    CompletableFuture<Void> install(TopicName topicName, CommandSubscribe copy, String schemaUser) {
        if (!metadataAllowed(copy)) {
            return CompletableFuture.completedFuture(null); // the stock path refuses it, before it looks the topic up
        }
        BrokerService brokerService = cnx.getBrokerService();
        boolean createTopic = copy.isForceTopicCreation() && brokerService.isAllowAutoTopicCreation(topicName);
        return brokerService.getTopic(topicName.toString(), createTopic).thenCompose((Optional<Topic> topic) -> {
            if (topic.isEmpty() || !(topic.get() instanceof PersistentTopic)) {
                return CompletableFuture.completedFuture(null); // the stock path reports the missing topic
            }
            PersistentTopic persistent = (PersistentTopic) topic.get();
            boolean allowCreate = brokerService.isAllowAutoSubscriptionCreation(topicName);
            boolean missing = !persistent.getSubscriptions().containsKey(copy.getSubscription());
            CompletableFuture<Boolean> accepted = !allowCreate && missing ? CompletableFuture.completedFuture(true)
                    : schemaAccepted(persistent, copy, schemaUser); // else the installer refuses the missing one
            return accepted.thenCompose(yes -> {
                if (!yes) {
                    return CompletableFuture.completedFuture(null);
                }
                Map<String, String> properties = new HashMap<>();
                // A key given twice: the first counts, as in stock's SubscriptionOption.getPropertiesMap.
                copy.getSubscriptionPropertiesList().forEach(kv -> properties.putIfAbsent(kv.getKey(), kv.getValue()));
                return installer.install(persistent, copy.getSubscription(), copy.getInitialPosition(), properties,
                        allowCreate);
            });
        });
    }

    private boolean metadataAllowed(CommandSubscribe copy) {
        Map<String, String> metadata = new HashMap<>();
        copy.getMetadatasList().forEach(kv -> metadata.put(kv.getKey(), kv.getValue()));
        try {
            Metadata.validateMetadata(metadata,
                    cnx.getBrokerService().getPulsar().getConfiguration().getMaxConsumerMetadataSize());
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private static CompletableFuture<Boolean> schemaAccepted(PersistentTopic topic, CommandSubscribe copy,
                                                             String user) {
        if (!copy.hasSchema()) {
            return CompletableFuture.completedFuture(true);
        }
        Schema schema = copy.getSchema();
        Map<String, String> props = new HashMap<>();
        schema.getPropertiesList().forEach(kv -> props.put(kv.getKey(), kv.getValue()));
        SchemaData data = SchemaData.builder().data(schema.getSchemaData()).isDeleted(false)
                .timestamp(System.currentTimeMillis()).user(user == null ? "" : user)
                .type(Commands.getSchemaType(schema.getType())).props(props).build();
        return topic.addSchemaIfIdleOrCheckCompatible(data).handle((v, error) -> {
            Throwable cause = error == null ? null : FutureUtil.unwrapCompletionException(error);
            if (cause != null && !(cause instanceof SchemaException)) {
                throw new CompletionException(cause); // not a refusal: the subscribe fails with it
            }
            return cause == null;
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
