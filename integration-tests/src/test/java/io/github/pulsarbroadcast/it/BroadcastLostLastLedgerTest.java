package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertNotEquals;
import static org.testng.Assert.assertNull;
import static org.testng.Assert.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.common.policies.data.ManagedLedgerInternalStats.LedgerInfo;
import org.testng.annotations.Test;

/**
 * Storage lost the last ledger that holds entries of a topic, and the topic is loaded again: the managed ledger then
 * has that ledger (its entries counted) followed by a new, empty one, and its last confirmed entry is the lost
 * ledger's last. A consumer that had everything stands just past the lost ledger's end, a position that names no entry
 * (stock's "next valid position" of it is itself) ({@link LostLedgerScenario}'s ledgers of 5 entries, cache off,
 * window and reads of 3; the stock default {@code autoSkipNonRecoverableData=false}). The topic was loaded once in
 * between without a write: a load opens only the last ledger of the list, and stock drops that one from the list when
 * it is lost; here the last is the empty ledger of that load, which the next load drops as empty, so the lost one
 * stays listed, as after any load or time-based rollover without writes.
 *
 * <p>Regressions (thirty-ninth session, found by a review): with a consumer waiting in the lost ledger, the tail read
 * stepped over it into the empty ledger and the catch-up read from inside the lost ledger took the position past its
 * end, whose next position is itself, so its loop could not end while the read wanted more entries than the ledger
 * had left: here the first test's broker logged a 536-ms dispatch task before the fix (the producer's first write
 * moved the next position on and ended the loop); the test now waits for late's catch-up read to fail before anything
 * is written, which the loop never let happen; a unit test pins the loop
 * ({@code UnreadableEntriesTest.aLostLastLedgerFollowedByAnEmptyOneNeitherSpinsNorHoldsTheOthers}). With every
 * consumer past the lost ledger, the first new message made the tail read fail there and the
 * step looked for a ledger after the new one: it was retried for ever and nobody got anything more (the second test:
 * "live got 0 of 3" before the fix).
 *
 * <p>Threading: TestNG's test thread only.
 */
public class BroadcastLostLastLedgerTest extends LostLedgerScenario {

    /**
     * "late" acknowledged the first ledger only, "live" everything; the last ledger (one entry) is lost. "late" comes
     * back first: the tail read at its position fails and steps over the lost ledger. "live" then gets the new
     * messages and "late" waits for the lost entry (nothing skipped).
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void aConsumerInTheLostLastLedgerDoesNotStopTheOthers() throws Exception {
        String topic = newTopic("lost-last-ledger");
        Consumer<String> late = closeAfterTest(broadcastConsumer(topic, SUBSCRIPTION, "late"));
        Consumer<String> live = closeAfterTest(broadcastConsumer(topic, SUBSCRIPTION, "live"));
        long lastLedger = publishSixAndLoseTheSixth(topic, live, late);
        Consumer<String> lateBack = closeAfterTest(broadcastConsumer(topic, SUBSCRIPTION, "late"));
        awaitReadFailures(topic, 2); // the tail read, stepping over the lost ledger, and late's catch-up read
        Consumer<String> liveBack = closeAfterTest(broadcastConsumer(topic, SUBSCRIPTION, "live"));
        List<String> more = publish(closeAfterTest(producer(topic)), "n", 3);
        assertEquals(receive(liveBack, 3), more, "live, past the lost ledger " + lastLedger);
        assertNull(lateBack.receive(1, TimeUnit.SECONDS), "late waits for the lost entry");
        assertEquals(metric(topic, "pulsar_broadcast_entries_skipped_unreadable_total"), 0.0, "entries skipped");
    }

    /**
     * Both acknowledged everything before the last ledger was lost; only "live" comes back. Nobody needs the lost
     * ledger, and the new messages reach "live".
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void aLostLastLedgerThatEveryoneHadDoesNotHoldTheNewMessages() throws Exception {
        String topic = newTopic("lost-last-ledger-had");
        Consumer<String> live = closeAfterTest(broadcastConsumer(topic, SUBSCRIPTION, "live"));
        publishSixAndLoseTheSixth(topic, live, null);
        Consumer<String> liveBack = closeAfterTest(broadcastConsumer(topic, SUBSCRIPTION, "live"));
        List<String> more = publish(closeAfterTest(producer(topic)), "n", 3);
        assertEquals(receive(liveBack, 3), more, "live");
    }

    /**
     * Six messages: "live" receives and acknowledges all, "late" (if any) the first five, the first ledger; both
     * and the producer leave; the topic is unloaded, loaded without a write (an empty ledger after the sixth's) and
     * unloaded again; the ledger of the sixth is lost.
     */
    private long publishSixAndLoseTheSixth(String topic, Consumer<String> live, Consumer<String> late)
            throws Exception {
        List<String> sent;
        try (Producer<String> producer = producer(topic)) {
            sent = publish(producer, "m", 6);
        }
        List<Message<String>> got = take(live, 6);
        assertEquals(values(got), sent, "live");
        live.acknowledgeCumulative(got.get(5).getMessageId());
        long lastLedger = ledgerOf(got.get(5));
        assertNotEquals(ledgerOf(got.get(4)), lastLedger, "the sixth message alone in the last ledger");
        if (late != null) {
            takeAndAck(late, 6, 5);
            late.close();
        }
        live.close(); // a consumer's acks go out before its close, on the same connection
        cluster.admin().topics().unload(topic);
        List<LedgerInfo> ledgers = cluster.admin().topics().getInternalStats(topic).ledgers; // loads the topic
        LedgerInfo empty = ledgers.get(ledgers.size() - 1);
        assertTrue(empty.ledgerId > lastLedger && empty.entries == 0, "an empty ledger after the sixth's: " + ledgers);
        cluster.admin().topics().unload(topic);
        lose(lastLedger);
        return lastLedger;
    }

    private void awaitReadFailures(String topic, int atLeast) {
        await().atMost(Duration.ofSeconds(30))
                .until(() -> metric(topic, "pulsar_broadcast_read_failures_total") >= atLeast);
    }
}
