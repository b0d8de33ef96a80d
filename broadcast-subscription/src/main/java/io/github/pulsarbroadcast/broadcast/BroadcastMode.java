package io.github.pulsarbroadcast.broadcast;

import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.pulsar.common.api.proto.CommandSubscribe;
import org.apache.pulsar.common.api.proto.KeyValue;

/**
 * How a client asks for a broadcast subscription, and the broker's reading of one subscribe command.
 *
 * <p>A client declares subscription type {@code Failover} and sets {@value #KEY}={@value #BROADCAST} either as a
 * <em>subscription property</em> (stored with the subscription's cursor, so the subscription stays broadcast across
 * restarts) or as a <em>consumer property</em> (consumer metadata, which every Pulsar client can send). Failover is
 * the declared type because every client allows cumulative acknowledgements on it.
 *
 * <p>Threading: stateless; any thread.
 */
public final class BroadcastMode {

    /** The subscription (or consumer) property that selects broadcast (the Java helper's {@link Broadcast#KEY}). */
    public static final String KEY = Broadcast.KEY;
    /** The only value the plugin serves. */
    public static final String BROADCAST = Broadcast.VALUE;

    private BroadcastMode() {
    }

    /**
     * Whether either property carries the key, whatever its value, or, with the value {@value #BROADCAST}, a key that
     * differs from it only in case or surrounding blanks (which {@link #explain} refuses, naming the key to write:
     * served as stock Failover it would give one consumer everything and make the subscription a stock one that
     * broadcast clients cannot join).
     */
    public static boolean requested(CommandSubscribe subscribe) {
        return find(subscribe.getSubscriptionPropertiesList()) != null || find(subscribe.getMetadatasList()) != null
                || nearMiss(subscribe.getSubscriptionPropertiesList()) != null
                || nearMiss(subscribe.getMetadatasList()) != null;
    }

    /**
     * Why the command cannot be served as a broadcast subscription, as a message for the client naming the key and
     * what is allowed; null when it can be, or when it does not ask for broadcast at all.
     */
    public static String explain(CommandSubscribe subscribe, boolean persistentTopic) {
        String subValue = find(subscribe.getSubscriptionPropertiesList());
        String consumerValue = find(subscribe.getMetadatasList());
        String misspelt = nearMiss(subscribe.getSubscriptionPropertiesList());
        misspelt = misspelt != null ? misspelt : nearMiss(subscribe.getMetadatasList());
        if (misspelt != null) {
            return "Property '" + misspelt + "' is not " + KEY + ": write the key exactly so (lower case, no blanks)"
                    + " to select broadcast, or leave it out";
        }
        if (subValue == null && consumerValue == null) {
            return null;
        }
        String twice = givenTwice(subscribe);
        if (twice != null) {
            return twice;
        }
        if (subValue != null && !BROADCAST.equals(subValue)) {
            return "Subscription property " + KEY + "=" + subValue + " is not supported: the only allowed value is '"
                    + BROADCAST + "'";
        }
        if (consumerValue != null && !BROADCAST.equals(consumerValue)) {
            return "Consumer property " + KEY + "=" + consumerValue + " is not supported: the only allowed value is '"
                    + BROADCAST + "'";
        }
        if (subscribe.getSubType() != CommandSubscribe.SubType.Failover) {
            return KEY + "=" + BROADCAST + " needs subscription type Failover, not " + subscribe.getSubType()
                    + " (a broadcast subscription gives every consumer every message; declare Failover)";
        }
        if (!persistentTopic) {
            return KEY + "=" + BROADCAST + " needs a persistent topic: '" + subscribe.getTopic()
                    + "' is non-persistent";
        }
        if (subscribe.hasDurable() && !subscribe.isDurable()) {
            return KEY + "=" + BROADCAST + " needs a durable subscription: readers and non-durable consumers cannot"
                    + " use it";
        }
        if (subscribe.hasReadCompacted() && subscribe.isReadCompacted()) {
            return KEY + "=" + BROADCAST + " does not support readCompacted";
        }
        if (subscribe.hasStartMessageRollbackDurationSec() && subscribe.getStartMessageRollbackDurationSec() > 0) {
            return KEY + "=" + BROADCAST + " does not support startMessageRollbackDurationSec (it would move every"
                    + " consumer of the subscription); use 'pulsar-admin topics reset-cursor' to move it as a whole";
        }
        if (subscribe.hasReplicateSubscriptionState() && subscribe.isReplicateSubscriptionState()) {
            return KEY + "=" + BROADCAST + " does not support replicateSubscriptionState=true (consumer positions are"
                    + " not replicated between clusters)";
        }
        return null;
    }

    /** The one message that tells a client how to join broadcast subscription {@code subscription}. */
    public static String howToJoin(String subscription) {
        return "Subscription '" + subscription + "' is a broadcast subscription: subscribe with subscription type"
                + " Failover and the subscription property (or consumer property) " + KEY + "=" + BROADCAST;
    }

    /**
     * A key given twice in the consumer properties or the schema's properties, which stock's subscribe cannot read
     * (it fails on them after the plugin would have created the subscription, and the client got no answer:
     * regression, forty-third session, found by a review); null when there is none.
     */
    private static String givenTwice(CommandSubscribe subscribe) {
        String key = repeatedKey(subscribe.getMetadatasList());
        if (key != null) {
            return "Consumer property '" + key + "' is given twice: each key may appear once";
        }
        key = subscribe.hasSchema() ? repeatedKey(subscribe.getSchema().getPropertiesList()) : null;
        return key == null ? null : "Schema property '" + key + "' is given twice: each key may appear once";
    }

    /**
     * The first key given twice, or null; linear (a set), as stock's reading of the lists is: this runs before
     * authorization and schema properties have no size limit but the frame's (regression, forty-third session's
     * review: a nested loop let one command with 200,000 keys hold an event loop for minutes).
     */
    private static String repeatedKey(List<KeyValue> properties) {
        if (properties.size() < 2) {
            return null;
        }
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < properties.size(); i++) {
            String key = properties.get(i).getKey();
            if (!seen.add(key)) {
                return key;
            }
        }
        return null;
    }

    /**
     * A key that is {@link #KEY} but for case or surrounding blanks, with the value {@value #BROADCAST} (any case,
     * blanks around it): a request for broadcast with the key mistyped. Null otherwise: such a key with another value
     * is a stock property like any other.
     */
    private static String nearMiss(List<KeyValue> properties) {
        for (int i = 0; i < properties.size(); i++) {
            KeyValue kv = properties.get(i);
            String key = kv.getKey();
            if (key.length() >= KEY.length() && !KEY.equals(key) && KEY.equalsIgnoreCase(key.trim())
                    && BROADCAST.equalsIgnoreCase(kv.getValue().trim())) {
                return key;
            }
        }
        return null;
    }

    private static String find(List<KeyValue> properties) {
        for (int i = 0; i < properties.size(); i++) {
            KeyValue kv = properties.get(i);
            if (KEY.equals(kv.getKey())) {
                return kv.getValue();
            }
        }
        return null;
    }
}
