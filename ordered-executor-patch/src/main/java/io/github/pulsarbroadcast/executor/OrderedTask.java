package io.github.pulsarbroadcast.executor;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One task accepted by a {@link SubscriptionOrderedExecutor}, with the accounting around it: it counts itself started
 * and finished on its thread's {@link ThreadCounters}, and never lets an exception escape (a failure is logged and
 * counted), so the pool's worker thread is never replaced and the executor's list of threads stays accurate.
 *
 * <p>Threading: immutable; runs only on thread {@link #index} of its executor.
 */
final class OrderedTask implements Runnable {

    private static final Logger LOG = LoggerFactory.getLogger(SubscriptionOrderedExecutor.class);

    /** At most one slow-task warning per thread in this time; the count goes on. */
    private static final long SLOW_WARNING_EVERY_NANOS = TimeUnit.SECONDS.toNanos(10);

    /** What every task of one executor shares. Immutable; its counters are thread-safe. */
    static final class Accounting {
        final String name;
        final ThreadCounters counters;
        final LongAdder failedTasks = new LongAdder();
        /** Set for good when a shutdown starts dropping the queues ({@link Termination#abandonRemaining}). */
        volatile boolean abandoning;
        /** Tasks that finished while {@link #abandoning}: those a shutdown interrupted, or that started after it. */
        final LongAdder finishedWhileAbandoning = new LongAdder();
        /** Tasks that run longer are counted and warned about; 0 means off. */
        final long slowTaskNanos;

        Accounting(String name, ThreadCounters counters, long slowTaskNanos) {
            this.name = name;
            this.counters = counters;
            this.slowTaskNanos = slowTaskNanos;
        }

        /** How logs and rejections name a task of {@code key} (null: unordered) on thread {@code index}. */
        String describe(SubscriptionKey key, int index) {
            String thread = name + "-" + index;
            return key == null ? "unordered task on thread " + thread
                    : "task for subscription " + key + " on thread " + thread;
        }
    }

    final int index;
    final SubscriptionKey key;
    private final Runnable task;
    private final Accounting accounting;

    OrderedTask(Accounting accounting, int index, SubscriptionKey key, Runnable task) {
        this.accounting = accounting;
        this.index = index;
        this.key = key;
        this.task = task;
    }

    @Override
    public void run() {
        ThreadCounters counters = accounting.counters;
        counters.started(index);
        long start = System.nanoTime();
        try {
            task.run();
        } catch (Throwable t) {
            accounting.failedTasks.increment();
            logQuietly(() -> LOG.error("{}: {} failed; the thread goes on with the next task", accounting.name,
                    accounting.describe(key, index), t));
        } finally {
            long end = System.nanoTime();
            long slow = accounting.slowTaskNanos;
            if (accounting.abandoning) {
                accounting.finishedWhileAbandoning.increment();
            }
            if (counters.finished(index, end - start, slow, end, SLOW_WARNING_EVERY_NANOS)) {
                logQuietly(() -> LOG.warn("{}: {} took {} ms (slow-task threshold {} ms; {} slow tasks on this thread"
                        + " so far, at most one warning per thread every {} s): {}", accounting.name,
                        accounting.describe(key, index), TimeUnit.NANOSECONDS.toMillis(end - start),
                        TimeUnit.NANOSECONDS.toMillis(slow), counters.slow(index),
                        TimeUnit.NANOSECONDS.toSeconds(SLOW_WARNING_EVERY_NANOS), task));
            }
        }
    }

    /**
     * Logs, and swallows what the logging throws (an appender that throws, no memory left to format): escaping, it
     * would make the pool replace this worker thread with one the executor does not know (a read-only review,
     * forty-fourth session).
     */
    private static void logQuietly(Runnable logging) {
        try {
            logging.run();
        } catch (Throwable ignored) {
            // nothing safe left to do with it here
        }
    }

    @Override
    public String toString() {
        return accounting.describe(key, index) + ": " + task;
    }
}
