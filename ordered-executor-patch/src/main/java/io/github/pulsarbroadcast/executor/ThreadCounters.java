package io.github.pulsarbroadcast.executor;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongFunction;

/**
 * The per-thread counters of a {@link SubscriptionOrderedExecutor}: tasks queued, whether one runs, tasks run, the
 * time they took, and how many were slow. Each thread's counters sit on their own 128-byte line, so threads do not
 * share cache lines when they count.
 *
 * <p>Threading: atomic. {@code QUEUED} is incremented by submitters (a CAS loop when bounded) and decremented by the
 * owning thread; every other slot of thread {@code i} is written only by thread {@code i} (ordered writes, no
 * read-modify-write atomics), and read by any thread.
 */
final class ThreadCounters {

    /** Longs per thread: 6 used, the rest pads them onto their own 128-byte line. */
    private static final int STRIDE = 16;
    private static final int QUEUED = 0;
    private static final int RUNNING = 1;
    private static final int COMPLETED = 2;
    private static final int TASK_NANOS = 3;
    private static final int SLOW = 4;
    /** {@code System.nanoTime()} of the last slow-task warning, 0 before the first. */
    private static final int LAST_WARNING = 5;

    private final AtomicLongArray slots;

    ThreadCounters(int threads) {
        this.slots = new AtomicLongArray(threads * STRIDE);
    }

    /**
     * Counts one more queued task on thread {@code index}, unless {@code bound > 0} and the queue already holds that
     * many; then throws the exception {@code rejection} makes from the current queue length.
     */
    void reserve(int index, int bound, LongFunction<RejectedExecutionException> rejection) {
        int slot = index * STRIDE + QUEUED;
        if (bound <= 0) {
            slots.incrementAndGet(slot);
            return;
        }
        while (true) {
            long queued = slots.get(slot);
            if (queued >= bound) {
                throw rejection.apply(queued);
            }
            if (slots.compareAndSet(slot, queued, queued + 1)) {
                return;
            }
        }
    }

    /** A queued task of thread {@code index} was dropped or refused before it ran. */
    void unreserve(int index) {
        slots.decrementAndGet(index * STRIDE + QUEUED);
    }

    /** Thread {@code index} starts one of its queued tasks; called by that thread. */
    void started(int index) {
        slots.set(index * STRIDE + RUNNING, 1); // first: a reader never sees the task neither queued nor running
        slots.decrementAndGet(index * STRIDE + QUEUED);
    }

    /**
     * Thread {@code index} finished a task that took {@code nanos}; called by that thread. Returns true when the task
     * was slow ({@code slowNanos > 0} and it took longer) and no slow-task warning was due in the last
     * {@code warnEveryNanos}: the caller then warns.
     */
    boolean finished(int index, long nanos, long slowNanos, long nowNanos, long warnEveryNanos) {
        int base = index * STRIDE;
        slots.set(base + RUNNING, 0);
        slots.lazySet(base + COMPLETED, slots.get(base + COMPLETED) + 1);
        slots.lazySet(base + TASK_NANOS, slots.get(base + TASK_NANOS) + nanos);
        if (slowNanos <= 0 || nanos <= slowNanos) {
            return false;
        }
        slots.lazySet(base + SLOW, slots.get(base + SLOW) + 1);
        long last = slots.get(base + LAST_WARNING);
        if (last != 0 && nowNanos - last < warnEveryNanos) {
            return false;
        }
        slots.lazySet(base + LAST_WARNING, nowNanos);
        return true;
    }

    long queued(int index) {
        return slots.get(index * STRIDE + QUEUED);
    }

    boolean running(int index) {
        return slots.get(index * STRIDE + RUNNING) != 0;
    }

    long completed(int index) {
        return slots.get(index * STRIDE + COMPLETED);
    }

    long taskNanos(int index) {
        return slots.get(index * STRIDE + TASK_NANOS);
    }

    long slow(int index) {
        return slots.get(index * STRIDE + SLOW);
    }
}
