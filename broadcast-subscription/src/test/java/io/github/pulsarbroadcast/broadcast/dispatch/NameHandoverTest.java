package io.github.pulsarbroadcast.broadcast.dispatch;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertSame;
import static org.testng.Assert.assertTrue;
import static org.testng.Assert.fail;

import io.github.pulsarbroadcast.broadcast.cursor.CursorRules;
import io.github.pulsarbroadcast.broadcast.cursor.VirtualCursor;
import io.github.pulsarbroadcast.broadcast.dispatch.RetainedCursors.NameBusyException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.testng.annotations.AfterClass;
import org.testng.annotations.Test;

/**
 * The contract of {@link NameHandover} over the real {@link RetainedCursors}: a subscribe that finds its consumer name
 * held joins once the holder leaves; a live holder on another connection keeps the name (refused at once); a dead one
 * is probed and its leave lets the subscribe in; the same connection waits without a probe; a holder that stays past
 * the wait keeps the name; a wait of 0 refuses at once. The broker-level counterpart, with a real silent connection,
 * is {@code BroadcastBusyNameTest} in the integration tests.
 *
 * <p>Threading: the test thread plays the subscribe and the holder's leave; the scheduler's thread ends the waits.
 */
public class NameHandoverTest {

    private static final long WAIT_MS = 200;

    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final CursorRules rules = new CursorRules(p -> PositionImpl.get(p.getLedgerId(), p.getEntryId() + 1), 10);

    @AfterClass(alwaysRun = true)
    public void stopScheduler() {
        scheduler.shutdownNow();
    }

    /** The cursors, the holder of "car-a" on {@code cnx}, and the busy failure a second subscribe met. */
    private final class Held {
        final RetainedCursors cursors = new RetainedCursors();
        final BroadcastConsumer holder;
        final NameBusyException busy;
        final AtomicInteger joins = new AtomicInteger();

        Held(ModelHarness.Connection cnx) throws Exception {
            holder = attach(cursors, cnx);
            NameBusyException caught = null;
            try {
                attach(cursors, ModelHarness.discarding());
            } catch (NameBusyException e) {
                caught = e;
            }
            assertSame(caught.holder, holder, "the refusal names the holder");
            busy = caught;
        }

        CompletableFuture<Void> await(ModelHarness.Connection joining, long waitMs) {
            return await(joining, waitMs, waitMs);
        }

        CompletableFuture<Void> await(ModelHarness.Connection joining, long waitMs, long probeMs) {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
            return NameHandover.await("[t][s]", busy, joining, deadline, probeMs, cursors, scheduler, Runnable::run,
                    () -> {
                joins.incrementAndGet();
                try {
                    attach(cursors, joining);
                    return CompletableFuture.completedFuture(null);
                } catch (NameBusyException e) {
                    return CompletableFuture.failedFuture(e);
                }
            });
        }

        void leave() {
            cursors.detach(holder, true, Long.MAX_VALUE);
        }
    }

    private BroadcastConsumer attach(RetainedCursors cursors, ModelHarness.Connection cnx) throws NameBusyException {
        return cursors.attach("car-a", () -> new VirtualCursor(PositionImpl.get(3, 0), rules),
                (cursor, resumed) -> new BroadcastConsumer(null, 1, "car-a", cnx, cursor, false, 0, resumed));
    }

    private static void assertRefusedAsBusy(CompletableFuture<Void> subscribe) throws Exception {
        try {
            subscribe.get(10, TimeUnit.SECONDS);
            fail("the subscribe took a name that is held");
        } catch (ExecutionException e) {
            assertTrue(e.getCause() instanceof NameBusyException, e.toString());
        }
    }

    @Test(groups = "unit", timeOut = 30_000)
    public void aLiveHolderOnAnotherConnectionKeepsItsName() throws Exception {
        ModelHarness.Connection holderCnx = ModelHarness.discarding();
        Held held = new Held(holderCnx);
        CompletableFuture<Void> subscribe = held.await(ModelHarness.discarding(), 60_000);
        assertRefusedAsBusy(subscribe);
        assertEquals(holderCnx.probes.get(), 1, "the holder's connection was asked");
        held.leave();
        assertEquals(held.joins.get(), 0, "a refused subscribe is forgotten, not joined when the holder leaves later");
    }

    @Test(groups = "unit", timeOut = 30_000)
    public void aDeadHolderOnAnotherConnectionGivesItsNameToTheWaitingSubscribe() throws Exception {
        ModelHarness.Connection holderCnx = ModelHarness.discarding();
        holderCnx.liveness = CompletableFuture.completedFuture(false);
        Held held = new Held(holderCnx);
        CompletableFuture<Void> subscribe = held.await(ModelHarness.discarding(), 60_000);
        assertFalse(subscribe.isDone(), "waits for the dead connection's consumers to be removed");
        held.leave();
        subscribe.get(10, TimeUnit.SECONDS);
        assertEquals(held.joins.get(), 1);
    }

    @Test(groups = "unit", timeOut = 30_000)
    public void onTheSameConnectionTheSubscribeWaitsForTheHolderToClose() throws Exception {
        ModelHarness.Connection cnx = ModelHarness.discarding();
        Held held = new Held(cnx);
        CompletableFuture<Void> subscribe = held.await(cnx, 60_000);
        assertEquals(cnx.probes.get(), 0, "a connection that just sent a subscribe is not pinged");
        assertFalse(subscribe.isDone());
        held.leave();
        subscribe.get(10, TimeUnit.SECONDS);
        assertEquals(held.joins.get(), 1);
    }

    /**
     * A subscribe that waits again (another took the name first) with a few milliseconds left probes the new holder's
     * connection with the whole configured wait, not with what is left: a live connection whose answer takes longer
     * than that must not be closed as dead. Regression (forty-third session, a review): probed with 5 ms here.
     */
    @Test(groups = "unit", timeOut = 30_000)
    public void aSecondWaitProbesWithTheWholeWaitNotWhatIsLeft() throws Exception {
        ModelHarness.Connection holderCnx = ModelHarness.discarding();
        holderCnx.liveness = new CompletableFuture<>();
        Held held = new Held(holderCnx);
        assertRefusedAsBusy(held.await(ModelHarness.discarding(), 5, WAIT_MS));
        assertEquals(holderCnx.lastProbeTimeoutMs, WAIT_MS, "the probe's timeout");
    }

    @Test(groups = "unit", timeOut = 30_000)
    public void aHolderThatStaysPastTheWaitKeepsItsName() throws Exception {
        ModelHarness.Connection holderCnx = ModelHarness.discarding();
        holderCnx.liveness = new CompletableFuture<>();
        Held held = new Held(holderCnx);
        long started = System.nanoTime();
        assertRefusedAsBusy(held.await(ModelHarness.discarding(), WAIT_MS));
        assertTrue(System.nanoTime() - started >= TimeUnit.MILLISECONDS.toNanos(WAIT_MS),
                "refused only when the wait ended");
        held.leave();
        assertEquals(held.joins.get(), 0);
    }

    @Test(groups = "unit", timeOut = 30_000)
    public void aWaitOfZeroRefusesAtOnce() throws Exception {
        ModelHarness.Connection holderCnx = ModelHarness.discarding();
        Held held = new Held(holderCnx);
        CompletableFuture<Void> subscribe = held.await(ModelHarness.discarding(), 0);
        assertTrue(subscribe.isCompletedExceptionally());
        assertRefusedAsBusy(subscribe);
        assertEquals(holderCnx.probes.get(), 0);
    }

    @Test(groups = "unit", timeOut = 30_000)
    public void aNameReleasedBeforeTheWaitStartsIsJoinedAtOnce() throws Exception {
        ModelHarness.Connection holderCnx = ModelHarness.discarding();
        Held held = new Held(holderCnx);
        held.leave();
        held.await(ModelHarness.discarding(), 60_000).get(10, TimeUnit.SECONDS);
        assertEquals(held.joins.get(), 1);
        assertEquals(holderCnx.probes.get(), 0);
    }
}
