package io.github.pulsarbroadcast.broadcast.dispatch;

import static org.testng.Assert.assertEquals;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.testng.annotations.BeforeMethod;
import org.testng.annotations.Test;

/**
 * The end of a terminated topic ({@link EndOfTopic}): a consumer is told once the dispatcher found the end and the
 * consumer acknowledged everything, whatever the other consumers did, as stock tells a subscription once its backlog
 * is empty. The model ledger, as the managed ledger, does not fail a tail read that was already waiting when the
 * topic was terminated.
 *
 * <p>Regressions: the consumers of a topic terminated while the tail read waited were never told by the plugin (only
 * by stock's path, once the slowest had acknowledged everything; thirty-second session, found by
 * {@code BroadcastEndOfTopicTest}); a consumer was told when its last message was sent, before it acknowledged it
 * (same session); a reset-cursor after the end replayed nothing (twenty-sixth session's review).
 *
 * <p>Threading: the test thread plays the dispatch thread, the connections, the acknowledgements and the admin.
 */
public class EndOfTopicTest {

    private static final long LEDGER = 3;

    private ModelHarness world;
    private ModelLedger ledger;
    private SubscriptionEngine engine;
    private Map<Long, List<PositionImpl>> received;
    private Map<Long, Integer> ends;
    private ModelHarness.Connection cnx;

    /** A fresh world per method (TestNG runs every method on one instance). */
    @BeforeMethod(alwaysRun = true)
    public void newWorld() {
        world = new ModelHarness();
        ledger = new ModelLedger(LEDGER, 1_000);
        engine = world.newEngine("persistent://t/ns/terminated", ledger);
        received = new HashMap<>();
        ends = new HashMap<>();
        cnx = new ModelHarness.Connection(new ModelHarness.Deliveries() {
            @Override
            public void delivered(BroadcastConsumer consumer, WindowEntry entry, long epoch) {
                received.computeIfAbsent(consumer.consumerId, k -> new ArrayList<>()).add(entry.position);
            }

            @Override
            public void endOfTopic(long consumerId) {
                ends.merge(consumerId, 1, Integer::sum);
            }
        });
    }

    @Test(groups = "unit", timeOut = 30_000)
    public void aTopicTerminatedWhileTheTailReadWaitsIsFoundByTheSync() {
        BroadcastConsumer car = join(1, "car");
        publish(3);
        ackAll(car);
        ledger.terminate();
        world.settle(ledger);
        assertEquals(ends(car), 0, "the waiting read is not failed by the termination");
        engine.sync();
        world.settle(ledger);
        assertEquals(ends(car), 1, "told the end once the sync found it");
        ledger.failCancelledRead(); // the read the sync cancelled fails late: stale, not a second end
        world.settle(ledger);
        assertEquals(ends(car), 1, "told once");
    }

    @Test(groups = "unit", timeOut = 30_000)
    public void aConsumerIsToldOnlyOnceItAcknowledgedEverything() {
        BroadcastConsumer car = join(1, "car");
        publish(3);
        terminateAndSync();
        assertEquals(received.get(1L).size(), 3);
        assertEquals(ends(car), 0, "three messages sent, none acknowledged");
        engine.acknowledge(car, LEDGER, 0, false);
        engine.acknowledge(car, LEDGER, 2, false);
        assertEquals(ends(car), 0, "m-1 not acknowledged");
        engine.acknowledge(car, LEDGER, 1, false);
        assertEquals(ends(car), 1, "told by its last acknowledgement");
    }

    @Test(groups = "unit", timeOut = 30_000)
    public void aConsumerIsToldWhateverTheOthersAcknowledged() {
        BroadcastConsumer slow = join(1, "slow");
        publish(2);
        terminateAndSync();
        BroadcastConsumer newcomer = join(2, "newcomer"); // a new name starts at the tail: nothing to acknowledge
        world.settle(ledger);
        assertEquals(ends(newcomer), 1, "the newcomer is told at once");
        assertEquals(ends(slow), 0, "the slow one has two messages to acknowledge");
        ackAll(slow);
        assertEquals(ends(slow), 1);
    }

    @Test(groups = "unit", timeOut = 30_000)
    public void aResetAfterTheEndReplaysToTheEndAndTellsItAgain() {
        BroadcastConsumer car = join(1, "car", InitialPosition.Earliest);
        publish(5);
        terminateAndSync();
        ackAll(car);
        assertEquals(received.get(1L).size(), 5, "delivered: " + received);
        assertEquals(ends(car), 1, "told the end");

        resetToTheStart(car);
        BroadcastConsumer back = join(2, "car", InitialPosition.Earliest);
        List<PositionImpl> expected = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            expected.add(PositionImpl.get(LEDGER, i));
        }
        assertEquals(received.get(2L), expected, "replayed from the reset position");
        assertEquals(ends(back), 0, "not told before it acknowledged the replay");
        ackAll(back);
        assertEquals(ends(back), 1, "then told the end again");
    }

    /** As stock, which tells every consumer once the backlog is empty: one without permits is told too. */
    @Test(groups = "unit", timeOut = 30_000)
    public void aConsumerWithoutPermitsIsToldToo() throws Exception {
        BroadcastConsumer car = engine.join(1, "car", cnx, InitialPosition.Latest, 0);
        engine.flow(car, 3);
        world.settle(ledger);
        publish(3);
        ackAll(car); // its three permits used: it does not wait at the tail, and no tail read runs
        terminateAndSync();
        assertEquals(ends(car), 1, "told without a flow");
    }

    /**
     * The ledger says "terminated" as soon as termination begins; a write already sent still adds an entry. The
     * sync does not take the end while a write is pending (a review, thirty-second session: a consumer was told the
     * end before that last entry, and the client's flag is never cleared).
     */
    @Test(groups = "unit", timeOut = 30_000)
    public void noEndIsFoundWhileAWriteIsPending() {
        BroadcastConsumer car = join(1, "car");
        publish(2);
        ackAll(car);
        ledger.pendingAdds = 1;
        terminateAndSync();
        assertEquals(ends(car), 0, "not while a write is on its way");
        PositionImpl late = ledger.publish(false);
        ledger.pendingAdds = 0;
        world.settle(ledger);
        engine.sync();
        world.settle(ledger);
        assertEquals(received.get(1L).get(received.get(1L).size() - 1), late, "the late entry delivered");
        assertEquals(ends(car), 0);
        ackAll(car);
        assertEquals(ends(car), 1, "then the end told");
    }

    /**
     * A write confirmed during the termination wakes the read that already failed at the end (the ledger keeps it
     * on its waiting list): its entries still reach the consumers. Regression (a review, thirty-second session): the
     * end was taken as found and the consumers left idle, the entry in the window and never sent.
     */
    @Test(groups = "unit", timeOut = 30_000)
    public void entriesAfterTheReadFailedAtTheEndAreDelivered() {
        BroadcastConsumer car = join(1, "car");
        publish(2);
        ackAll(car);
        ledger.terminate();
        ledger.pendingAdds = 1;
        engine.waitingCursorDropped(); // a read issued again now fails at the end (the ledger's state says so)
        world.runAll();
        PositionImpl late = ledger.publish(false); // confirmed: wakes that read before its failure is handled
        ledger.pendingAdds = 0;
        world.settle(ledger);
        assertEquals(received.get(1L).get(received.get(1L).size() - 1), late, "the late entry delivered");
        ackAll(car);
        engine.sync();
        world.settle(ledger);
        assertEquals(ends(car), 1, "then the end told");
    }

    /**
     * A waiting read the managed cursor holds and the dispatcher does not know of makes every tail read fail with
     * ConcurrentWaitCallbackException: it is dropped, and the read made again after the back-off.
     */
    @Test(groups = "unit", timeOut = 30_000)
    public void aStrayWaitingReadIsDroppedAndTheReadMadeAgain() {
        ledger.strayWaitingRead = true;
        BroadcastConsumer car = join(1, "car");
        world.advance(1_000); // the retry's back-off
        world.settle(ledger);
        publish(2);
        assertEquals(received.getOrDefault(car.consumerId, List.of()).size(), 2, "delivered after the retry");
    }

    /**
     * A cancelled read's late failure (its delayed check fails the callback it was given) is not the read in flight:
     * arriving after a reset-cursor it must not end the replay. Regression (thirty-second session's review).
     */
    @Test(groups = "unit", timeOut = 30_000)
    public void aCancelledReadsLateFailureDoesNotEndAReplay() throws Exception {
        BroadcastConsumer car = join(1, "car", InitialPosition.Earliest);
        publish(3);
        ackAll(car);
        terminateAndSync(); // the sync cancels the read that waited and finds the end
        assertEquals(ends(car), 1);
        resetToTheStart(car);
        BroadcastConsumer back = engine.join(2, "car", cnx, InitialPosition.Earliest, 0);
        ledger.failCancelledRead();
        engine.flow(back, 100);
        world.settle(ledger);
        assertEquals(received.getOrDefault(2L, List.of()).size(), 3, "replayed: " + received.get(2L));
    }

    /** The topic is terminated and the periodic sync runs. */
    private void terminateAndSync() {
        ledger.terminate();
        engine.sync();
        world.settle(ledger);
    }

    /** As stock's reset to the earliest position: the consumers are disconnected and the cursor moves back. */
    private void resetToTheStart(BroadcastConsumer connected) {
        engine.leave(connected);
        engine.beginReset();
        ledger.resetTo(PositionImpl.get(LEDGER, -1));
        engine.cursorReset();
        engine.finishReset(CompletableFuture.completedFuture(null)).join();
        world.settle(ledger);
    }

    private BroadcastConsumer join(long id, String name) {
        return join(id, name, InitialPosition.Latest);
    }

    private BroadcastConsumer join(long id, String name, InitialPosition initial) {
        try {
            BroadcastConsumer bc = engine.join(id, name, cnx, initial, 0);
            engine.flow(bc, 100);
            world.settle(ledger);
            return bc;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private void publish(int n) {
        for (int i = 0; i < n; i++) {
            ledger.publish(false);
        }
        world.settle(ledger);
    }

    /** Acknowledges, one by one, everything {@code bc} was sent. */
    private void ackAll(BroadcastConsumer bc) {
        for (PositionImpl p : received.getOrDefault(bc.consumerId, List.of())) {
            engine.acknowledge(bc, p.getLedgerId(), p.getEntryId(), false);
        }
    }

    private int ends(BroadcastConsumer bc) {
        return ends.getOrDefault(bc.consumerId, 0);
    }
}
