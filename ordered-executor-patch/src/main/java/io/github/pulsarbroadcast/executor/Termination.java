package io.github.pulsarbroadcast.executor;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.common.util.OrderedExecutor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a {@link SubscriptionOrderedExecutor} ends: waiting for its threads to run what they accepted, then dropping
 * what is still queued and interrupting what still runs, with a report.
 *
 * <p>Threading: stateless; called by the executor's {@code shutdown} under its shutdown lock, never from the
 * executor's own threads.
 */
final class Termination {

    private static final Logger LOG = LoggerFactory.getLogger(SubscriptionOrderedExecutor.class);
    private static final int MAX_LOGGED_ABANDONED_KEYS = 20;

    private Termination() {
    }

    /**
     * Waits for every thread of {@code delegate} to terminate by {@code deadlineNanos}; false if one did not. An
     * interrupt of the caller does not cut the wait short (the timeout is a promise to the queued work); the caller's
     * interrupt status is set again when it returns.
     */
    static boolean awaitDrained(OrderedExecutor delegate, int threads, long deadlineNanos) {
        boolean interrupted = false;
        try {
            for (int i = 0; i < threads; i++) {
                ExecutorService thread = delegate.chooseThread((long) i);
                while (true) {
                    try {
                        long remaining = Math.max(0L, deadlineNanos - System.nanoTime());
                        if (!thread.awaitTermination(remaining, TimeUnit.NANOSECONDS)) {
                            return false;
                        }
                        break;
                    } catch (InterruptedException e) {
                        interrupted = true; // the flag is clear now: the next wait blocks
                    }
                }
            }
            return true;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Drops the queued tasks, interrupts the running ones, waits up to {@code graceNanos} for them to stop, and
     * reports how many of each there were. The interrupted ones are counted as they finish (a task a thread had
     * taken off its queue just before the drop runs too, interrupted) plus one per thread still running after the
     * grace: reading the threads' "running" flags before the drop (as before the forty-fourth session) missed a task
     * started between two tasks, which then ran after {@code shutdown} had returned, and counted one that had just
     * finished (a read-only review).
     */
    static ShutdownReport abandonRemaining(OrderedExecutor delegate, int threads, OrderedTask.Accounting accounting,
                                           long graceNanos) {
        accounting.abandoning = true;
        List<Runnable> dropped = delegate.shutdownNow();
        Map<String, Integer> droppedPerKey = new TreeMap<>();
        for (Runnable runnable : dropped) {
            if (runnable instanceof OrderedTask) {
                OrderedTask task = (OrderedTask) runnable;
                accounting.counters.unreserve(task.index);
                droppedPerKey.merge(accounting.describe(task.key, task.index), 1, Integer::sum);
            }
        }
        String name = accounting.name;
        droppedPerKey.entrySet().stream().limit(MAX_LOGGED_ABANDONED_KEYS).forEach(entry ->
                LOG.warn("{}: abandoned {} x {}", name, entry.getValue(), entry.getKey()));
        if (droppedPerKey.size() > MAX_LOGGED_ABANDONED_KEYS) {
            LOG.warn("{}: abandoned tasks of {} more keys", name, droppedPerKey.size() - MAX_LOGGED_ABANDONED_KEYS);
        }
        awaitDrained(delegate, threads, System.nanoTime() + graceNanos);
        int stillRunning = 0;
        for (int i = 0; i < threads; i++) {
            stillRunning += accounting.counters.running(i) ? 1 : 0;
        }
        return new ShutdownReport(false, dropped.size(),
                (int) accounting.finishedWhileAbandoning.sum() + stillRunning);
    }
}
