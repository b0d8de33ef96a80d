package io.github.pulsarbroadcast.broadcast.cnx;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertNull;
import static org.testng.Assert.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
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

    @Test(groups = "unit", timeOut = 10_000)
    public void pendingJoinsAreTakenOnceAndForgotten() {
        PendingJoins joins = new PendingJoins(System::nanoTime);
        joins.put(1, InitialPosition.Earliest);
        joins.put(2, InitialPosition.Latest);
        assertEquals(joins.take(1), InitialPosition.Earliest);
        assertNull(joins.take(1), "taken once");
        joins.forget(2);
        assertNull(joins.take(2));
        assertEquals(joins.size(), 0);
    }

    /** Subscribes that stock code refused after the preparation never attach; they must not accumulate. */
    @Test(groups = "unit", timeOut = 10_000)
    public void staleJoinsArePurgedSoFailuresCannotAccumulate() {
        AtomicLong now = new AtomicLong();
        PendingJoins joins = new PendingJoins(now::get);
        for (long id = 0; id < 1000; id++) {
            joins.put(id, InitialPosition.Latest); // all fail in stock code: never taken
        }
        now.addAndGet(PendingJoins.MAX_AGE_NANOS + TimeUnit.SECONDS.toNanos(1));
        for (long id = 1000; id < 100_000; id++) {
            joins.put(id, InitialPosition.Latest);
            if (id % 2 == 0) {
                joins.take(id);
            }
            if (id % 1000 == 0) {
                now.addAndGet(PendingJoins.MAX_AGE_NANOS / 4);
            }
        }
        assertTrue(joins.size() < 5_000, "stale entries are purged: " + joins.size());
        assertNull(joins.take(0), "the first failures are gone");
    }
}
