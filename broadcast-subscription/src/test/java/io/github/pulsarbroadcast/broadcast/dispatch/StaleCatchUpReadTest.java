package io.github.pulsarbroadcast.broadcast.dispatch;

import static org.testng.Assert.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.testng.annotations.BeforeMethod;
import org.testng.annotations.Test;

/**
 * A catch-up read answered after the subscription's cursor was reset. Storage leaves out of a replay the positions
 * already deleted from the subscription when the read was made; a reset-cursor then makes them readable again, so the
 * read's answer must not move anyone past them: it is thrown away and the read made again ({@code
 * CatchUpReads.invalidate}). The model test's random schedules do not reach this (taking the invalidation out fails
 * none of them); here the race is placed by hand.
 *
 * <p>Ledgers of 5 entries from id 3, a window of 10, reads of 5 (as {@code UnreadableEntriesTest}).
 */
public class StaleCatchUpReadTest {

    private ModelHarness world;
    private ModelLedger ledger;
    private SubscriptionEngine engine;

    @BeforeMethod(alwaysRun = true)
    public void newWorld() {
        world = new ModelHarness();
        ledger = new ModelLedger(3, 5);
        engine = world.newEngine("persistent://t/ns/stale-catch-up", ledger);
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void aReadAnsweredAfterAResetSkipsNothingTheResetMadeReadable() throws Exception {
        BroadcastConsumer late = engine.join(1, "late", ModelHarness.discarding(), InitialPosition.Earliest, 0);
        BroadcastConsumer live = engine.join(2, "live", ModelHarness.discarding(), InitialPosition.Earliest, 0);
        settle();
        engine.flow(live, 1000);
        settle();
        List<PositionImpl> published = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            published.add(ledger.publish(false));
            settle();
        }
        // An operator's skip moves the managed cursor past (3,2) before the plugin's sync hears of it; the late
        // consumer's catch-up read of (3,0)..(3,4) is then answered with (3,3) and (3,4) only, and answered late.
        ledger.moveMarkDeleteForward(PositionImpl.get(3, 2));
        ledger.holdReplays = true;
        engine.flow(late, 1000);
        world.runAll();

        // Stock's reset-cursor: everyone is disconnected, the cursor moves back to the start, everyone comes back.
        engine.leave(late);
        engine.leave(live);
        engine.beginReset();
        ledger.resetTo(PositionImpl.get(3, -1));
        engine.cursorReset();
        engine.finishReset(CompletableFuture.completedFuture(null)).join();
        settle();
        BroadcastConsumer liveAgain = engine.join(3, "live", ModelHarness.discarding(), InitialPosition.Earliest, 0);
        settle();
        engine.flow(liveAgain, 1000);
        settle(); // the tail passes everything again: what follows the late consumer is behind the window
        List<PositionImpl> received = new ArrayList<>();
        BroadcastConsumer lateAgain = engine.join(4, "late", ModelHarness.recording(received),
                InitialPosition.Earliest, 0);
        settle();
        engine.flow(lateAgain, 1000);
        settle();
        assertEquals(received, List.of(), "nothing before the read made before the reset is answered");

        ledger.releaseHeldReplays();
        settle();
        assertEquals(received, published, "everything from the reset position, in order");
    }

    /** Runs dispatch tasks and storage answers until neither has anything left. */
    private void settle() {
        world.settle(ledger);
    }
}
