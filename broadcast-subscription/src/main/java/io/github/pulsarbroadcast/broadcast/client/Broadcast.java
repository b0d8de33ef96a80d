package io.github.pulsarbroadcast.broadcast.client;

import java.util.HashMap;
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

    /**
     * Sets the type and both properties on {@code builder} and returns it. Stock's
     * {@link ConsumerBuilder#subscriptionProperties} replaces every subscription property set before it: to give the
     * subscription properties of your own, pass them to {@link #configure(ConsumerBuilder, Map)} instead.
     */
    public static <T> ConsumerBuilder<T> configure(ConsumerBuilder<T> builder) {
        return configure(builder, Map.of());
    }

    /**
     * As {@link #configure(ConsumerBuilder)}, with {@code subscriptionProperties} besides the key (stored with the
     * subscription when it is created, as stock stores them).
     *
     * @throws IllegalArgumentException when {@code subscriptionProperties} give the key another value
     */
    public static <T> ConsumerBuilder<T> configure(ConsumerBuilder<T> builder,
                                                   Map<String, String> subscriptionProperties) {
        Map<String, String> all = new HashMap<>(subscriptionProperties);
        String given = all.put(KEY, VALUE);
        if (given != null && !VALUE.equals(given)) {
            throw new IllegalArgumentException("Subscription property " + KEY + "=" + given
                    + " is not allowed: the only allowed value is '" + VALUE + "'");
        }
        return builder.subscriptionType(SubscriptionType.Failover)
                .subscriptionProperties(all)
                .property(KEY, VALUE);
    }
}
