package io.github.pulsarbroadcast.broadcast.client;

import java.util.Map;
import org.apache.pulsar.client.api.ConsumerBuilder;
import org.apache.pulsar.client.api.SubscriptionType;

/**
 * Selects a broadcast subscription on a stock {@link ConsumerBuilder}: subscription type Failover, plus the
 * subscription property and the consumer property {@value #KEY}={@value #VALUE}. Every consumer of the subscription
 * then receives every message.
 *
 * <pre>{@code
 * Consumer<String> consumer = Broadcast.configure(client.newConsumer(Schema.STRING))
 *         .topic("persistent://public/default/area-42")
 *         .subscriptionName("vehicles")
 *         .consumerName(vehicleId)          // unique per consumer; a reconnect with it resumes where it left
 *         .subscribe();
 * }</pre>
 *
 * <p>Threading: stateless; any thread.
 */
public final class Broadcast {

    /** The property name; the broker plugin reads the same constant ({@code BroadcastMode.KEY}). */
    public static final String KEY = "pulsar.subscription.mode";
    /** The property value. */
    public static final String VALUE = "broadcast";

    private Broadcast() {
    }

    /** Sets the type and both properties on {@code builder} and returns it. */
    public static <T> ConsumerBuilder<T> configure(ConsumerBuilder<T> builder) {
        return builder.subscriptionType(SubscriptionType.Failover)
                .subscriptionProperties(Map.of(KEY, VALUE))
                .property(KEY, VALUE);
    }
}
