package io.github.pulsarbroadcast.broadcast.dispatch;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.testng.annotations.BeforeMethod;
import org.testng.annotations.Test;

/**
 * Entries that storage can never return (their ledger's data is gone): with the broker's
 * {@code autoSkipNonRecoverableData=true} a consumer catching up through them is moved past the read that failed, the
 * skipped entries are counted, and everything readable before and after them is delivered in order; with the stock
 * default ({@code false}) the read is retried with back-off and nothing is skipped, so the consumer waits and receives
 * everything once storage can serve it again. A read that throws instead of calling back is retried the same way.
 *
 * <p>Ledgers of 5 entries from id 3, a window of 10, reads of 5: 30 entries fill ledgers 3 to 8, a consumer that had
 * no permits while they were published reads ledgers 3 to 6 from storage and the last 10 from the window. Ledger 4 is
 * the lost one.
 */
public class UnreadableEntriesTest {

    private ModelHarness world;
    private ModelLedger ledger;
    private SubscriptionEngine engine;
    private List<PositionImpl> received;

    @BeforeMethod(alwaysRun = true)
    public void newWorld() {
        world = new ModelHarness();
        ledger = new ModelLedger(3, 5);
        engine = world.newEngine("persistent://t/ns/unreadable", ledger);
        received = new ArrayList<>();
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void autoSkipMovesPastTheLostEntriesOnlyAndCountsThem() throws Exception {
        ledger.skipNonRecoverable = true;
        BroadcastConsumer late = publishWhileOneConsumerHasNoPermits();
        engine.flow(late, 1000);
        settle();
        List<PositionImpl> expected = all();
        expected.removeIf(p -> p.getLedgerId() == 4);
        assertEquals(received, expected, "everything but ledger 4, in order");
        assertEquals(engine.counters().entriesSkippedUnreadable(), 5, "entries skipped");
    }

    /**
     * Entries skipped as lost count as acknowledged for the consumers that skipped them, as stock's cursor marks them
     * deleted: once both consumers acknowledged what they got, the mark-delete position reaches the end. Regression
     * (fortieth session, found by a review): the late consumer's position stayed at (3,4), and the mark-delete with it.
     */
    @Test(groups = "unit", timeOut = 10_000)
    public void entriesSkippedAsLostCountAsAcknowledgedSoTheMarkDeleteMovesPastThem() throws Exception {
        ledger.skipNonRecoverable = true;
        List<PositionImpl> liveReceived = new ArrayList<>();
        BroadcastConsumer late = engine.join(1, "late", ModelHarness.recording(received), InitialPosition.Earliest, 0);
        BroadcastConsumer live = engine.join(2, "live", ModelHarness.recording(liveReceived),
                InitialPosition.Earliest, 0);
        settle();
        engine.flow(live, 1000);
        settle();
        publish(30);
        loseLedger4();
        engine.flow(late, 1000);
        settle();
        for (PositionImpl p : received) {
            engine.acknowledge(late, p.getLedgerId(), p.getEntryId(), false);
        }
        for (PositionImpl p : liveReceived) {
            engine.acknowledge(live, p.getLedgerId(), p.getEntryId(), false);
        }
        engine.sync();
        settle();
        assertEquals(liveReceived, all(), "live had everything before ledger 4 was lost");
        assertEquals(ledger.markDeleted(), PositionImpl.get(8, 4), "the mark-delete position past the lost ledger");
    }

    /**
     * A close that failed half-way and reopened while a lost ledger was set aside: the retry scheduled before the close
     * (due at 100 ms) does not cut the ledger's new set-aside (from 50 ms, due at 150 ms) short. Regression (fortieth
     * session, left by the thirty-ninth): the old retry read the ledger again at 100 ms.
     */
    @Test(groups = "unit", timeOut = 10_000)
    public void aRetryFromBeforeAReopenDoesNotCutTheNewSetAsideShort() throws Exception {
        BroadcastConsumer late = publishWhileOneConsumerHasNoPermits();
        engine.flow(late, 1000);
        settle();
        assertEquals(ledger.failedReplays, 1, "ledger 4 set aside");
        engine.close();
        for (BroadcastConsumer bc : new ArrayList<>(engine.attachedConsumers())) {
            engine.leave(bc);
        }
        engine.closeFanOut();
        settle();
        engine.reopen();
        world.advance(50);
        settle();
        late = engine.join(1, "late", ModelHarness.recording(received), InitialPosition.Earliest, 0);
        settle();
        engine.flow(late, 1000);
        settle();
        assertEquals(ledger.failedReplays, 2, "set aside again after the reopen");
        world.advance(50);
        settle();
        assertEquals(ledger.failedReplays, 2, "nothing read before the new set-aside's own retry");
        world.advance(50);
        settle();
        assertEquals(ledger.failedReplays, 3, "its own retry");
    }

    /**
     * Reads of 3 over ledgers of 5: a read never spans two ledgers, so the lost ledger's failed reads skip only its
     * own entries. Regression (thirty-eighth session, found while writing {@code BroadcastLostLedgerSkipTest}): a
     * read of (3,3), (3,4) and (4,0) failed as a whole and its skip took the readable (3,3) and (3,4) along.
     */
    @Test(groups = "unit", timeOut = 10_000)
    public void autoSkipTakesNoReadableEntryOfAnotherLedgerAlong() throws Exception {
        catchUpThroughLedger4WithReadsOf3(false);
        assertEquals(ledger.failedReplays, 2, "(4,0)..(4,2), then (4,3)..(4,4)");
    }

    /** A ledger that does not exist any more is skipped to its end by its first failed read, as a stock cursor does. */
    @Test(groups = "unit", timeOut = 10_000)
    public void aLedgerThatDoesNotExistIsSkippedWholeByOneRead() throws Exception {
        catchUpThroughLedger4WithReadsOf3(true);
        assertEquals(ledger.failedReplays, 1, "one read of ledger 4");
    }

    /**
     * With {@code autoSkipNonRecoverableData} and reads of 3, the late consumer catches up through ledger 4, lost
     * entry by entry or ({@code wholeLedger}) as a ledger that does not exist: it gets everything else, 5 skipped.
     */
    private void catchUpThroughLedger4WithReadsOf3(boolean wholeLedger) throws Exception {
        engine = world.newEngine("persistent://t/ns/unreadable-3", ledger, ModelHarness.config(10, 3, 60, 1000, 1000));
        ledger.skipNonRecoverable = true;
        BroadcastConsumer late = publishWhileOneConsumerHasNoPermits();
        if (wholeLedger) {
            ledger.unreadable.clear();
            ledger.lostLedgers.add(4L);
        }
        engine.flow(late, 1000);
        settle();
        List<PositionImpl> expected = all();
        expected.removeIf(p -> p.getLedgerId() == 4);
        assertEquals(received, expected, "everything but ledger 4, in order");
        assertEquals(engine.counters().entriesSkippedUnreadable(), 5, "entries skipped");
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void withoutAutoSkipTheConsumerWaitsAndLosesNothing() throws Exception {
        BroadcastConsumer late = publishWhileOneConsumerHasNoPermits();
        engine.flow(late, 1000);
        settle();
        for (int i = 0; i < 10; i++) {
            world.advance(60_000); // the read's back-off, up to its one-minute ceiling
            settle();
        }
        List<PositionImpl> expected = all();
        assertEquals(received, expected.subList(0, 5), "ledger 3, then nothing past the lost entries");
        assertEquals(engine.counters().entriesSkippedUnreadable(), 0);
        long failures = engine.counters().readFailures();
        assertTrue(failures >= 5 && failures <= 11, "one read failure per retry: " + failures);
        assertOnceStorageServesAgain(received, expected, "everything");
    }

    /**
     * A catch-up read that throws instead of calling back is retried with back-off, and the consumer loses nothing.
     * Regression (thirty-third session, found by {@code StockEquivalenceTest}): stock's replay threw on a terminated
     * ledger loaded again, the read stayed "in flight" for ever and the consumer received nothing more.
     */
    @Test(groups = "unit", timeOut = 10_000)
    public void aCatchUpReadThatThrowsIsRetried() throws Exception {
        BroadcastConsumer late = publishWhileOneConsumerHasNoPermits();
        ledger.unreadable.clear();
        ledger.replaysThatThrow = 2;
        engine.flow(late, 1000);
        settle();
        assertEquals(received, List.of(), "nothing yet: the read threw");
        for (int i = 0; i < 3; i++) {
            world.advance(60_000);
            settle();
        }
        assertEquals(ledger.replaysThatThrow, 0, "both throws were met");
        assertEquals(received, all(), "everything, in order, once the read is made again");
        assertEquals(engine.counters().readFailures(), 2, "pulsar_broadcast_read_failures_total");
    }

    /** The same for a tail read. */
    @Test(groups = "unit", timeOut = 10_000)
    public void aTailReadThatThrowsIsRetried() throws Exception {
        ledger.tailReadsThatThrow = 1;
        joinWithPermits(1, "car", received, InitialPosition.Earliest);
        List<PositionImpl> published = publish(3);
        world.advance(60_000);
        settle();
        assertEquals(ledger.tailReadsThatThrow, 0, "the throw was met");
        assertEquals(received, published, "everything, in order, once the read is made again");
        assertEquals(engine.counters().readFailures(), 1, "pulsar_broadcast_read_failures_total");
    }

    /**
     * A tail read that meets entries storage lost steps over the rest of their ledger: the consumers that need them
     * wait for them in catch-up reads (nothing skipped, the stock default), the others go on receiving. Regression
     * (thirty-eighth session, found with {@code BroadcastLostLedgerWaitsTest}'s scenario and a topic loaded again,
     * where the tail read starts at the slowest consumer): the tail read was retried for ever and every consumer of
     * the subscription stopped receiving, new messages included.
     */
    @Test(groups = "unit", timeOut = 10_000)
    public void aTailReadOverLostEntriesDoesNotHoldTheOthers() throws Exception {
        loseLedger4();
        List<PositionImpl> early = new ArrayList<>();
        joinWithPermits(1, "first", early, InitialPosition.Earliest);
        publish(30);
        joinWithPermits(2, "newcomer", received, InitialPosition.Latest);
        List<PositionImpl> later = publish(3);
        world.advance(60_000);
        settle();
        assertEquals(received, later, "the newcomer gets what is published after it joined");
        List<PositionImpl> expected = all();
        assertEquals(early, expected.subList(0, 5), "ledger 3, then it waits for ledger 4");
        assertEquals(engine.counters().entriesSkippedUnreadable(), 0);
        expected.addAll(later);
        assertOnceStorageServesAgain(early, expected, "everything");
    }

    /**
     * The lost ledger is the last with entries and an empty one follows it (a time-based rollover, or any topic
     * load): the position after its last entry, where a consumer that had everything stands, is valid and its next
     * position is itself. The late consumer's tail read at (4,0) steps over ledger 4 (the read position is then in
     * the empty ledger 5); "live", joining at (4,1), gets what is published later, and "late" waits for (4,0).
     * Regressions (thirty-ninth session, found by a review): the catch-up read of (4,0) took (4,1) along and its loop
     * never ended (the test timed out); with the loop bounded, "live" was sent to the same read of (4,1) and got
     * nothing.
     */
    @Test(groups = "unit", timeOut = 10_000)
    public void aLostLastLedgerFollowedByAnEmptyOneNeitherSpinsNorHoldsTheOthers() throws Exception {
        List<PositionImpl> early = new ArrayList<>();
        List<PositionImpl> expected = loseTheLastLedgerUnderLate(early);
        assertEquals(engine.counters().readFailures(), 2, "the tail read at (4,0), which stepped over ledger 4, and"
                + " late's catch-up read of (4,0)");
        joinWithPermits(2, "live", received, InitialPosition.Latest);
        List<PositionImpl> later = publish(3);
        world.advance(60_000);
        settle();
        assertEquals(received, later, "live, past the lost ledger");
        assertEquals(early, expected.subList(0, 5), "late waits for (4,0)");
        assertEquals(engine.counters().entriesSkippedUnreadable(), 0);
        expected.addAll(later);
        assertOnceStorageServesAgain(early, expected, "everything");
    }

    /**
     * The same layout; "live", idle at (4,1) past the lost ledger's end, gets permits while the first entry of ledger 5
     * is written between the normalization of its position and the placement's look at the last written entry.
     * Regression (thirty-ninth session, second review): (4,1) then looked written and "live" waited in a catch-up read
     * of (4,1), which can never succeed, instead of at the tail.
     */
    @Test(groups = "unit", timeOut = 10_000)
    public void aWriteDuringThePlacementPastALostLastLedgerDoesNotStrandTheConsumer() throws Exception {
        loseTheLastLedgerUnderLate(new ArrayList<>()); // the tail read reads from (5,0) now
        BroadcastConsumer live = engine.join(2, "live", ModelHarness.recording(received), InitialPosition.Latest, 0);
        settle();
        List<PositionImpl> later = new ArrayList<>();
        ledger.onNextNormalize = () -> later.add(ledger.publish(false));
        engine.flow(live, 1000);
        settle();
        later.addAll(publish(2));
        world.advance(60_000);
        settle();
        assertEquals(received, later, "live, at the tail");
    }

    /**
     * The same layout with one consumer that had everything: the first new entry makes the tail read at (4,1) open
     * the lost ledger 4, and the read goes on in ledger 5. Regression (thirty-ninth session): the step took the read
     * position normalized, (5,0) once an entry was written there, looked for a ledger after ledger 5, found none and
     * retried for ever ({@code BroadcastLostLastLedgerTest} on a real broker: "live got 0 of 3").
     */
    @Test(groups = "unit", timeOut = 10_000)
    public void aLostLastLedgerThatTheConsumersHadDoesNotHoldTheNewEntries() throws Exception {
        joinWithPermits(1, "live", received, InitialPosition.Earliest);
        List<PositionImpl> expected = publish(6);
        ledger.rollOver();
        ledger.lostLedgers.add(4L);
        expected.addAll(publish(3));
        world.advance(60_000);
        settle();
        assertEquals(received, expected, "the six, then the new ones in ledger 5");
    }

    /**
     * A consumer waiting for the lost ledger 4 in a catch-up read (the stock default: nothing skipped) holds no other
     * consumer behind the window: "live", rewound to (5,1) by a redelivery, is read from storage meanwhile.
     * Regression (thirty-ninth session, found by a review): catch-up reads always started at the lowest waiting
     * position, so every consumer behind the window waited for the lost ledger too ("live" got nothing again).
     */
    @Test(groups = "unit", timeOut = 10_000)
    public void aConsumerWaitingForALostLedgerHoldsNoOtherCatchingUp() throws Exception {
        List<PositionImpl> lateGot = new ArrayList<>();
        BroadcastConsumer late = engine.join(1, "late", ModelHarness.recording(lateGot), InitialPosition.Earliest, 0);
        BroadcastConsumer live = engine.join(2, "live", ModelHarness.recording(received), InitialPosition.Earliest, 0);
        settle();
        engine.flow(live, 1000);
        settle();
        List<PositionImpl> all = publish(30);
        loseLedger4();
        engine.flow(late, 1000);
        settle();
        assertEquals(lateGot, all.subList(0, 5), "late: ledger 3, then it waits for ledger 4");
        engine.acknowledge(live, 5, 0, true);
        received.clear();
        engine.redeliver(live, 1);
        settle();
        world.advance(1_000);
        settle();
        assertEquals(received, all.subList(all.indexOf(PositionImpl.get(5, 1)), 30), "live, again from (5,1)");
        assertEquals(lateGot, all.subList(0, 5), "late still waits");
        assertOnceStorageServesAgain(lateGot, all, "late: everything");
    }

    /**
     * With {@code autoSkipNonRecoverableData} a lost ledger that the tail read meets is skipped by the managed cursor
     * itself (as {@code BroadcastLostLedgerSkipTest} shows on a real broker): the consumer gets ledgers 3 and 5, no
     * read fails and the plugin counts nothing. (Until the thirty-ninth session the model failed that read, and the
     * plugin's own step and catch-up skip ran instead, which a real broker never does.)
     */
    @Test(groups = "unit", timeOut = 10_000)
    public void withAutoSkipTheManagedCursorSkipsALostLedgerThatTheTailReadMeets() throws Exception {
        ledger.skipNonRecoverable = true;
        List<PositionImpl> published = publish(15);
        ledger.lostLedgers.add(4L);
        joinWithPermits(1, "car", received, InitialPosition.Earliest);
        world.advance(60_000);
        settle();
        List<PositionImpl> expected = new ArrayList<>(published);
        expected.removeIf(p -> p.getLedgerId() == 4);
        assertEquals(received, expected, "ledgers 3 and 5");
        assertEquals(engine.counters().readFailures(), 0, "the managed cursor skipped it");
        assertEquals(engine.counters().entriesSkippedUnreadable(), 0, "not counted by the plugin");
    }

    /**
     * "late" takes ledger 3 of six entries (ledger 4 holds the sixth), an empty ledger 5 follows (a rollover), ledger 4
     * is lost, and "late" gets permits: its tail read at (4,0) steps over ledger 4, its catch-up read waits for it.
     * Returns the six positions published; {@code early} records what "late" is sent.
     */
    private List<PositionImpl> loseTheLastLedgerUnderLate(List<PositionImpl> early) throws Exception {
        BroadcastConsumer late = engine.join(1, "late", ModelHarness.recording(early), InitialPosition.Earliest, 0);
        settle();
        engine.flow(late, 5);
        settle();
        List<PositionImpl> published = publish(6);
        assertEquals(early, published.subList(0, 5), "late took ledger 3");
        ledger.rollOver();
        ledger.lostLedgers.add(4L);
        engine.flow(late, 1000);
        settle();
        return published;
    }

    /** Joins a consumer with no permits and one that takes everything, publishes 30 entries; ledger 4 becomes lost. */
    private BroadcastConsumer publishWhileOneConsumerHasNoPermits() throws Exception {
        ModelHarness.Connection recording = ModelHarness.recording(received);
        BroadcastConsumer late = engine.join(1, "late", recording, InitialPosition.Earliest, 0);
        BroadcastConsumer live = engine.join(2, "live", ModelHarness.discarding(), InitialPosition.Earliest, 0);
        settle();
        engine.flow(live, 1000);
        settle();
        publish(30);
        loseLedger4();
        return late;
    }

    /**
     * The bookies come back (every entry and ledger readable again): after the reads' back-off, {@code got} is
     * {@code expected}, in order.
     */
    private void assertOnceStorageServesAgain(List<PositionImpl> got, List<PositionImpl> expected, String what) {
        ledger.unreadable.clear();
        ledger.lostLedgers.clear();
        world.advance(60_000);
        settle();
        assertEquals(got, expected, what + ", in order, once storage serves it again");
    }

    private void joinWithPermits(long id, String name, List<PositionImpl> into, InitialPosition start)
            throws Exception {
        world.joinWithPermits(engine, ledger, id, name, into, start);
    }

    private List<PositionImpl> publish(int n) {
        return world.publishSettled(ledger, n);
    }

    /** Every entry of ledger 4 becomes one that storage can never return. */
    private void loseLedger4() {
        for (long entry = 0; entry < 5; entry++) {
            ledger.unreadable.add(PositionImpl.get(4, entry));
        }
    }

    private List<PositionImpl> all() {
        List<PositionImpl> out = new ArrayList<>();
        for (long ledgerId = 3; ledgerId <= 8; ledgerId++) {
            for (long entry = 0; entry < 5; entry++) {
                out.add(PositionImpl.get(ledgerId, entry));
            }
        }
        return out;
    }

    /** Runs dispatch tasks and storage answers until neither has anything left. */
    private void settle() {
        world.settle(ledger);
    }
}
