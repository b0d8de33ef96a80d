package io.github.pulsarbroadcast.executor;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * Builds a {@link SubscriptionOrderedExecutor}. Not thread-safe: confine a builder to one thread. Its fields are
 * plain (unguarded), written by the setters and read by {@link #build()} on the same thread.
 */
public final class SubscriptionOrderedExecutorBuilder {
    String name = "broadcast-executor";
    int numThreads = Runtime.getRuntime().availableProcessors();
    int maxQueuedTasksPerThread;
    long slowTaskNanos = TimeUnit.MILLISECONDS.toNanos(100);
    /** How long a shutdown that dropped the queues waits for the interrupted tasks (1 s; tests may take longer). */
    long abandonGraceNanos = TimeUnit.SECONDS.toNanos(1);

    SubscriptionOrderedExecutorBuilder() {
    }

    /** For tests on a loaded machine: see {@link #abandonGraceNanos}. */
    SubscriptionOrderedExecutorBuilder abandonGrace(java.time.Duration grace) {
        this.abandonGraceNanos = grace.toNanos();
        return this;
    }

    /**
     * Sets the thread-name prefix; threads are called {@code <name>-<index>}.
     *
     * @param threadNamePrefix not blank
     * @return this builder
     */
    public SubscriptionOrderedExecutorBuilder name(String threadNamePrefix) {
        Objects.requireNonNull(threadNamePrefix, "threadNamePrefix");
        if (threadNamePrefix.isBlank()) {
            throw new IllegalArgumentException("threadNamePrefix must not be blank");
        }
        this.name = threadNamePrefix;
        return this;
    }

    /**
     * Sets the number of threads (the broker sizes it with {@code broadcastExecutorThreads}).
     *
     * @param numThreads at least 1
     * @return this builder
     */
    public SubscriptionOrderedExecutorBuilder numThreads(int numThreads) {
        if (numThreads < 1) {
            throw new IllegalArgumentException("numThreads must be at least 1, got " + numThreads);
        }
        this.numThreads = numThreads;
        return this;
    }

    /**
     * Sets the most tasks that may wait in one thread's queue; 0 (the default) means unbounded.
     *
     * @param maxQueuedTasksPerThread 0 or more
     * @return this builder
     */
    public SubscriptionOrderedExecutorBuilder maxQueuedTasksPerThread(int maxQueuedTasksPerThread) {
        if (maxQueuedTasksPerThread < 0) {
            throw new IllegalArgumentException(
                    "maxQueuedTasksPerThread must be 0 (unbounded) or more, got " + maxQueuedTasksPerThread);
        }
        this.maxQueuedTasksPerThread = maxQueuedTasksPerThread;
        return this;
    }

    /**
     * Sets the slow-task threshold: a task that runs longer is counted
     * ({@link SubscriptionOrderedExecutor#slowTasks(int)}) and logged at WARN (at most once per thread every 10 s, as
     * BookKeeper's {@code OrderedExecutor} warns on slow tasks).
     * The default is 100 ms; {@link Duration#ZERO} turns it off.
     *
     * @param threshold zero or positive
     * @return this builder
     */
    public SubscriptionOrderedExecutorBuilder slowTaskThreshold(Duration threshold) {
        Objects.requireNonNull(threshold, "threshold");
        if (threshold.isNegative()) {
            throw new IllegalArgumentException("slowTaskThreshold must be zero (off) or positive, got " + threshold);
        }
        this.slowTaskNanos = threshold.toNanos();
        return this;
    }

    /**
     * Starts the threads and returns the executor.
     *
     * @return a running executor
     */
    public SubscriptionOrderedExecutor build() {
        return new SubscriptionOrderedExecutor(this);
    }
}
