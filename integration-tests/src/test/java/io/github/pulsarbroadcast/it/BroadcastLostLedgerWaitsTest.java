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
     * Loaded again, the subscription's tail read starts at the slowest position, "late"'s, and "late" is the first
     * back: the read serves it the first ledger, then meets the lost ledger with "late" waiting there. It steps over
     * that ledger: "late" waits for it in a catch-up read, and "live", back after it, gets the new messages.
     * Regression (thirty-eighth session): the tail read was retried for ever and no consumer of the subscription
     * received anything more ("live got 0 of 3").
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void aLostLedgerBehindTheSlowestConsumerDoesNotHoldTheOthersAfterALoad() throws Exception {
        String topic = newTopic("lost-ledger-load");
        Lost lost = loseTheSecondLedger(topic);
        Consumer<String> late = reloadWithLateFirst(topic, lost);
        assertEquals(receive(late, 5), lost.sent.subList(0, 5), "the first ledger");
        await().atMost(Duration.ofSeconds(30))
                .until(() -> metric(topic, "pulsar_broadcast_read_failures_total") >= 2);
        Consumer<String> live = closeAfterTest(broadcastConsumer(topic, SUBSCRIPTION, "live"));
        List<String> more = publish(lost.producer, "n", 3);
        assertEquals(receive(live, 3), more, "live");
        assertNull(late.receive(1, TimeUnit.SECONDS), "nothing past the lost ledger");
        assertEquals(metric(topic, "pulsar_broadcast_entries_skipped_unreadable_total"), 0.0, "entries skipped");
    }
}
