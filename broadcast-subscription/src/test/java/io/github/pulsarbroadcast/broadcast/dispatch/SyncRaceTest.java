package io.github.pulsarbroadcast.broadcast.dispatch;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;

import io.github.pulsarbroadcast.broadcast.WindowBudget;
import io.github.pulsarbroadcast.broadcast.cursor.AckResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.testng.annotations.Test;

/**
 * The periodic sync against a close (and a reset-cursor) that another thread runs while the sync reads the
 * mark-delete position. Found
 * by a review (twenty-sixth session): the sync checked "closed" and read the mark-delete before it took the
 * positions' lock, so a close (which drops the retained positions) could fall between, and the sync moved the
 * mark-delete past a retained consumer's unacknowledged messages, which storage could then delete. The race is placed
 * deterministically: the storage runs the close on another thread when the sync reads the mark-delete, and the sync
 * goes on once that thread has finished or waits for the lock.
 *
 * <p>Threading: the test thread plays the dispatch thread; one more thread closes.
 */
public class SyncRaceTest {

    private static final long LEDGER = 3;

    @Test(groups = "unit", timeOut = 60_000)
    public void aCloseDuringTheSyncNeverMovesTheMarkDeletePastARetainedConsumer() throws Exception {
        ModelHarness world = new ModelHarness();
        ModelLedger ledger = new ModelLedger(LEDGER, 1_000);
        SubscriptionEngine engine = world.newEngine("persistent://t/ns/sync-race", ledger);
        BroadcastConsumer retained = engine.join(1, "retained", ModelHarness.discarding(), InitialPosition.Earliest, 0);
        BroadcastConsumer connected = engine.join(2, "connected", ModelHarness.discarding(), InitialPosition.Earliest,
                0);
        engine.flow(retained, 100);
        engine.flow(connected, 100);
        for (int i = 0; i < 10; i++) {
            ledger.publish(false);
        }
        world.settle(ledger);
        assertEquals(engine.acknowledge(retained, LEDGER, 2, true), AckResult.ADVANCED);
        assertEquals(engine.acknowledge(connected, LEDGER, 9, true), AckResult.ADVANCED);
        engine.leave(retained); // its position is retained (60 s here)
        world.runAll();
        assertEquals(engine.retainedCount(), 1);

        Thread[] closer = new Thread[1];
        ledger.onNextMarkDeletedRead = () -> {
            closer[0] = new Thread(engine::close, "closer");
            closer[0].start();
            await().atMost(Duration.ofSeconds(20)).until(() -> closer[0].getState() == Thread.State.TERMINATED
                    || closer[0].getState() == Thread.State.BLOCKED);
        };
        engine.sync();
        closer[0].join(20_000);
        assertTrue(engine.isClosed());
        PositionImpl markDeleted = ledger.markDeleted();
        assertTrue(markDeleted.compareTo(PositionImpl.get(LEDGER, 2)) <= 0,
                "the mark-delete " + markDeleted + " passed the retained consumer's acknowledged " + LEDGER + ":2");
    }

    /**
     * An operator's reset-cursor that runs while the sync reads the mark-delete position: the retained consumer must
     * resume at the reset position. Before the fix the scan, started from the mark-delete read before the reset,
     * moved the restarted position forward again, and the replay the operator asked for did not happen.
     */
    @Test(groups = "unit", timeOut = 60_000)
    public void aResetDuringTheSyncIsNotUndoneByIt() throws Exception {
        ModelHarness world = new ModelHarness();
        ModelLedger ledger = new ModelLedger(LEDGER, 1_000);
        // Saving off (interval 0): the sync posts nothing while the resetting thread may post.
        SubscriptionEngine engine = new SubscriptionEngine("persistent://t/ns/reset-race", "fleet", -1, ledger,
                ModelHarness.config(10, 5, 60, 60, 1000, 0), WindowBudget.unlimited(), world, () -> world.nowNanos,
                new SubscriptionStart(new ModelPositionStore(), null, false));
        BroadcastConsumer first = engine.join(1, "car", ModelHarness.discarding(), InitialPosition.Earliest, 0);
        engine.flow(first, 100);
        for (int i = 0; i < 10; i++) {
            ledger.publish(false);
        }
        world.settle(ledger);
        assertEquals(engine.acknowledge(first, LEDGER, 8, true), AckResult.ADVANCED);
        engine.leave(first);
        world.runAll();
        engine.sync();
        assertEquals(ledger.markDeleted(), PositionImpl.get(LEDGER, 8));

        Thread[] resetter = new Thread[1];
        ledger.onNextMarkDeletedRead = () -> {
            resetter[0] = new Thread(() -> {
                engine.beginReset();
                ledger.resetTo(PositionImpl.get(LEDGER, 2));
                engine.cursorReset();
                engine.finishReset(CompletableFuture.completedFuture(null)).join();
            }, "resetter");
            resetter[0].start();
            await().atMost(Duration.ofSeconds(20)).until(() -> resetter[0].getState() == Thread.State.TERMINATED
                    || resetter[0].getState() == Thread.State.BLOCKED);
        };
        engine.sync();
        resetter[0].join(20_000);
        assertEquals(ledger.markDeleted(), PositionImpl.get(LEDGER, 2), "the reset's position");

        List<PositionImpl> received = new ArrayList<>();
        ModelHarness.Connection recording = ModelHarness.recording(received);
        BroadcastConsumer back = engine.join(2, "car", recording, InitialPosition.Latest, 0);
        engine.flow(back, 100);
        world.settle(ledger);
        assertEquals(received.isEmpty() ? null : received.get(0), PositionImpl.get(LEDGER, 3),
                "the retained consumer resumes after the reset position: " + received);
    }
}
