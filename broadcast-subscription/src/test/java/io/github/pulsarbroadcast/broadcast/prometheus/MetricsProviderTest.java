package io.github.pulsarbroadcast.broadcast.prometheus;

import static org.testng.Assert.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.testng.annotations.Test;

/**
 * One subscription whose metrics cannot be read leaves out that subscription alone, counted, not the rest of the
 * scrape (regression, forty-fourth session, found by a read-only review: the exception ended the plugin's whole
 * output, so every subscription's series went stale).
 *
 * <p>Threading: the test thread plays the broker's metrics thread.
 */
public class MetricsProviderTest {

    @Test(groups = "unit", timeOut = 30_000)
    public void aSubscriptionThatFailsIsLeftOutAloneAndCounted() {
        BroadcastMetricsProvider provider = new BroadcastMetricsProvider(null, null);
        List<String> samples = new ArrayList<>();
        String good = "the sample of persistent://t/ns/b";
        provider.addSample(samples, () -> {
            throw new IllegalStateException("simulated: a dispatcher closing under the scrape");
        }, "persistent://t/ns/a", "fleet");
        provider.addSample(samples, () -> good, "persistent://t/ns/b", "fleet");
        assertEquals(samples, List.of(good), "the next subscription is still written");
        assertEquals(provider.sampleFailures(), 1);
    }
}
