package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.common.policies.data.PersistentTopicInternalStats;
import org.testng.annotations.Test;

/**
 * With the broker's {@code autoSkipNonRecoverableData=true}, a broadcast consumer catching up through a lost ledger is
 * moved past that ledger and only that ledger: every readable message before and after it arrives, in order, and the
 * skip is counted ({@link LostLedgerScenario}). This is the broker key's wiring into the plugin (read from the
 * broker's configuration when a subscription is made); the unit tests set it on a model.
 *
 * <p>Threading: TestNG's test thread only.
 */
public class BroadcastLostLedgerSkipTest extends LostLedgerScenario {

    @Override
    protected void configureBroker(ServiceConfiguration conf) {
        super.configureBroker(conf);
        conf.setAutoSkipNonRecoverableData(true);
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void aConsumerCatchingUpIsMovedPastTheLostLedgerOnly() throws Exception {
        String topic = newTopic("lost-ledger-skip");
        Lost lost = loseTheSecondLedger(topic);
        Consumer<String> late = closeAfterTest(broadcastConsumer(topic, SUBSCRIPTION, "late"));
        List<String> expected = new ArrayList<>(lost.sent);
        expected.removeAll(lost.inLostLedger);
        assertEquals(BroadcastReconnectTest.drain(late), expected, "everything but the lost ledger, in order");
        assertEquals(metric(topic, "pulsar_broadcast_entries_skipped_unreadable_total"), 5.0, "entries skipped");
        // Both acknowledged what they got (drain acknowledges): the skipped entries count as acknowledged for "late",
        // so the mark-delete position reaches the end (it stayed before the lost ledger until the fortieth session).
        assertMarkDeleteReachesTheEnd(topic);
    }

    /**
     * Loaded again, the subscription's tail read starts at "late"'s position, and "late" is the first back: the read
     * meets the lost ledger with "late" waiting there, and the managed cursor skips it itself (stock's read with this
     * key), so "late" gets everything but the lost ledger; that skip is stock's and is not counted by the plugin
     * (operations.md).
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void aLostLedgerMetByTheTailReadIsSkippedByTheManagedCursor() throws Exception {
        String topic = newTopic("lost-ledger-skip-load");
        Lost lost = loseTheSecondLedger(topic);
        Consumer<String> late = reloadWithLateFirst(topic, lost);
        List<String> expected = new ArrayList<>(lost.sent);
        expected.removeAll(lost.inLostLedger);
        assertEquals(BroadcastReconnectTest.drain(late), expected, "everything but the lost ledger, in order");
        assertEquals(metric(topic, "pulsar_broadcast_entries_skipped_unreadable_total"), 0.0, "not counted");
        assertMarkDeleteReachesTheEnd(topic); // the managed cursor marked the lost ledger's entries deleted
    }

    private void assertMarkDeleteReachesTheEnd(String topic) {
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            PersistentTopicInternalStats stats = cluster.admin().topics().getInternalStats(topic);
            assertEquals(stats.cursors.get(SUBSCRIPTION).markDeletePosition, stats.lastConfirmedEntry);
        });
    }
}
