package io.github.pulsarbroadcast.broadcast.cnx;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertNull;
import static org.testng.Assert.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.testng.annotations.Test;

/** The two bounds of a connection (issue 10, suspect 9): acks waiting to be applied, and prepared subscribes. */
public class AckGateAndPendingJoinsTest {

    /** Records what the gate asks of the connection; event-loop tasks run when the test says so. */
    private static final class FakeReads implements AckGate.Reads {
        final List<String> calls = new ArrayList<>();
        final List<Runnable> loop = new ArrayList<>();

        @Override
        public void pause() {
            calls.add("pause");
        }

        @Override
        public void resume() {
            calls.add("resume");
        }

        @Override
        public void onEventLoop(Runnable task) {
            loop.add(task);
        }

        void runLoop() {
            List<Runnable> tasks = new ArrayList<>(loop);
            loop.clear();
            tasks.forEach(Runnable::run);
        }
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void readsPauseAtTheBoundAndResumeAtHalf() {
        FakeReads reads = new FakeReads();
        LongAdder pauses = new LongAdder();
        AckGate gate = new AckGate(10, reads, pauses);
        for (int i = 0; i < 9; i++) {
            gate.submitted();
        }
        assertTrue(reads.calls.isEmpty(), "below the bound nothing pauses");
        gate.submitted();
        assertEquals(reads.calls, List.of("pause"));
        assertTrue(gate.isPaused());
        for (int i = 0; i < 4; i++) {
            gate.applied();
        }
        reads.runLoop();
        assertEquals(reads.calls, List.of("pause"), "6 still wait: more than half");
        gate.applied();
        reads.runLoop();
        assertEquals(reads.calls, List.of("pause", "resume"));
        assertFalse(gate.isPaused());
        assertEquals(gate.waiting(), 5);
        assertEquals(pauses.sum(), 1L, "one pause counted");
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void resumeIsRecheckedOnTheEventLoop() {
        FakeReads reads = new FakeReads();
        LongAdder pauses = new LongAdder();
        AckGate gate = new AckGate(4, reads, pauses);
        for (int i = 0; i < 4; i++) {
            gate.submitted();
        }
        gate.applied();
        gate.applied(); // at half: a resume is queued
        gate.submitted(); // but more came before the event loop ran it
        gate.submitted();
        reads.runLoop();
        assertEquals(reads.calls, List.of("pause", "pause"), "no resume while over half");
        assertEquals(pauses.sum(), 1L, "asked twice, one pause: the reads never resumed");
        for (int i = 0; i < 3; i++) {
            gate.applied();
        }
        reads.runLoop();
        for (int i = 0; i < 3; i++) {
            gate.submitted();
        }
        assertEquals(pauses.sum(), 2L, "resumed, then closed again: a second pause");
    }

    /** An ack the executor runs is counted until it is applied; one it refuses is applied at once, and not counted. */
    @Test(groups = "unit", timeOut = 10_000)
    public void submittedAcksAreCountedUntilAppliedAndARefusedOneIsAppliedHere() {
        FakeReads reads = new FakeReads();
        AckGate gate = new AckGate(10, reads, new LongAdder());
        List<Runnable> queued = new ArrayList<>();
        List<String> applied = new ArrayList<>();
        gate.submit(() -> applied.add("a"), queued::add);
        assertEquals(gate.waiting(), 1, "waits on the executor");
        assertTrue(applied.isEmpty());
        gate.submit(() -> applied.add("b"), task -> {
            throw new java.util.concurrent.RejectedExecutionException("simulated: shutting down");
        });
        assertEquals(applied, List.of("b"), "refused: applied here");
        assertEquals(gate.waiting(), 1, "and not left counted");
        queued.forEach(Runnable::run);
        assertEquals(applied, List.of("b", "a"));
        assertEquals(gate.waiting(), 0);
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void pendingJoinsAreTakenOnceAndForgotten() {
        PendingJoins joins = new PendingJoins(id -> true);
        joins.put(1, InitialPosition.Earliest);
        joins.put(2, InitialPosition.Latest);
        assertEquals(joins.take(1), InitialPosition.Earliest);
        assertNull(joins.take(1), "taken once");
        joins.forget(2);
        assertNull(joins.take(2));
        assertEquals(joins.size(), 0);
    }

    /**
     * Subscribes that stock code refused never attach, and stock forgets them without a word; they must not
     * accumulate. Regression (forty-third session, a review): purged by age only, two minutes of refused subscribes
     * (a role without CONSUME sending them) stayed in the map; here all 100,000 stayed.
     */
    @Test(groups = "unit", timeOut = 10_000)
    public void refusedJoinsArePurgedSoTheyCannotAccumulate() {
        Set<Long> heldByStock = new HashSet<>();
        PendingJoins joins = new PendingJoins(heldByStock::contains);
        for (long id = 0; id < 100_000; id++) {
            boolean refused = id % 10 != 0;
            if (!refused) {
                heldByStock.add(id); // in flight, or attached and not taken yet
            }
            joins.put(id, InitialPosition.Latest);
            if (id % 20 == 0) {
                joins.take(id); // attached
                heldByStock.remove(id);
            }
        }
        assertTrue(joins.size() <= Math.max(1024, 2 * heldByStock.size()), "refused joins are purged: "
                + joins.size() + " held, stock holds " + heldByStock.size());
        assertNull(joins.take(1), "a refused one is gone");
        for (long id : heldByStock) {
            assertEquals(joins.take(id), InitialPosition.Latest, "every join stock holds stays: " + id);
        }
    }

    /**
     * In the connection's order (the join is put, then stock registers its id) a purge keeps the join just put.
     * Regression (forty-third session, a review of the purge above): the purge that the 1,024th join started removed
     * that join, and its consumer was refused as a plain one.
     */
    @Test(groups = "unit", timeOut = 10_000)
    public void theJoinThatStartsAPurgeIsKept() {
        Set<Long> heldByStock = new HashSet<>();
        PendingJoins joins = new PendingJoins(heldByStock::contains);
        for (long id = 0; id < 5_000; id++) {
            joins.put(id, InitialPosition.Earliest);
            heldByStock.add(id); // stock's subscribe registers the id after the put
        }
        for (long id = 0; id < 5_000; id++) {
            assertEquals(joins.take(id), InitialPosition.Earliest, "join " + id);
        }
    }
}
