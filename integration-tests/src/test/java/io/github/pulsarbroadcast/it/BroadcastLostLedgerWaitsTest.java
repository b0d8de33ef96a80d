package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertNull;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.testng.annotations.Test;

/**
 * With the stock default {@code autoSkipNonRecoverableData=false}, a broadcast consumer catching up through a lost
 * ledger receives what precedes it and then waits: its read is retried with back-off and nothing is skipped, while
 * the consumers at the tail go on receiving ({@link LostLedgerScenario}).
 *
 * <p>Threading: TestNG's test thread only.
 */
public class BroadcastLostLedgerWaitsTest extends LostLedgerScenario {

    @Test(groups = "integration", timeOut = 120_000)
    public void aConsumerCatchingUpWaitsAtTheLostLedgerAndNothingIsSkipped() throws Exception {
        String topic = newTopic("lost-ledger-waits");
        Lost lost = loseTheSecondLedger(topic);
        Consumer<String> late = closeAfterTest(broadcastConsumer(topic, SUBSCRIPTION, "late"));
        assertEquals(receive(late, 5), lost.sent.subList(0, 5), "the first ledger");
        await().atMost(Duration.ofSeconds(30))
                .until(() -> metric(topic, "pulsar_broadcast_read_failures_total") >= 3);
        assertNull(late.receive(1, TimeUnit.SECONDS), "nothing past the lost ledger");
        assertEquals(metric(topic, "pulsar_broadcast_entries_skipped_unreadable_total"), 0.0, "entries skipped");
        List<String> more = publish(lost.producer, "n", 3);
        assertEquals(receive(lost.live, 3), more, "the tail goes on");
        assertNull(late.receive(1, TimeUnit.SECONDS), "still nothing past the lost ledger");
    }

    /**
     * Loaded again, the subscription's tail read starts at the slowest position, "late"'s (kept while it is away),
     * and meets the lost ledger: it steps over it, so "live" goes on receiving; "late", back, still waits for the
     * lost ledger. Regression (thirty-eighth session): the tail read was retried for ever and no consumer of the
     * subscription received anything more ("live got 0 of 3").
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void aLostLedgerBehindTheSlowestConsumerDoesNotHoldTheOthersAfterALoad() throws Exception {
        String topic = newTopic("lost-ledger-load");
        Lost lost = loseTheSecondLedger(topic);
        cluster.admin().topics().unload(topic);
        List<String> more = publish(lost.producer, "n", 3);
        assertEquals(receive(lost.live, 3), more, "live");
        Consumer<String> late = closeAfterTest(broadcastConsumer(topic, SUBSCRIPTION, "late"));
        assertEquals(receive(late, 5), lost.sent.subList(0, 5), "the first ledger");
        assertNull(late.receive(2, TimeUnit.SECONDS), "nothing past the lost ledger");
        assertEquals(metric(topic, "pulsar_broadcast_entries_skipped_unreadable_total"), 0.0, "entries skipped");
    }
}
