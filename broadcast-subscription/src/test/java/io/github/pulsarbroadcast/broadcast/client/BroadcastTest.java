package io.github.pulsarbroadcast.broadcast.client;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.expectThrows;

import java.util.Map;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionType;
import org.apache.pulsar.client.impl.ConsumerBuilderImpl;
import org.apache.pulsar.client.impl.conf.ConsumerConfigurationData;
import org.testng.annotations.Test;

/**
 * What the client helper sets on a stock Java consumer builder. Regression (forty-third session, a review): stock's
 * {@code subscriptionProperties} replaces the whole map, so a user's subscription properties could not be kept beside
 * the key; {@link Broadcast#configure(org.apache.pulsar.client.api.ConsumerBuilder, Map)} merges them.
 */
public class BroadcastTest {

    private static ConsumerConfigurationData<String> conf(ConsumerBuilderImpl<String> builder) {
        return builder.getConf();
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void configureSetsFailoverAndTheKeyAsBothProperties() {
        ConsumerBuilderImpl<String> builder = new ConsumerBuilderImpl<>(null, Schema.STRING);
        Broadcast.configure(builder);
        assertEquals(conf(builder).getSubscriptionType(), SubscriptionType.Failover);
        assertEquals(conf(builder).getSubscriptionProperties(), Map.of(Broadcast.KEY, Broadcast.VALUE));
        assertEquals(conf(builder).getProperties().get(Broadcast.KEY), Broadcast.VALUE);
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void subscriptionPropertiesOfTheUserAreKeptBesideTheKey() {
        ConsumerBuilderImpl<String> builder = new ConsumerBuilderImpl<>(null, Schema.STRING);
        Broadcast.configure(builder, Map.of("area", "42"));
        assertEquals(conf(builder).getSubscriptionProperties(), Map.of("area", "42", Broadcast.KEY, Broadcast.VALUE));
        IllegalArgumentException refused = expectThrows(IllegalArgumentException.class, () -> Broadcast.configure(
                new ConsumerBuilderImpl<>(null, Schema.STRING), Map.of(Broadcast.KEY, "multicast")));
        assertEquals(refused.getMessage(), "Subscription property pulsar.subscription.mode=multicast is not allowed:"
                + " the only allowed value is 'broadcast'");
    }
}
