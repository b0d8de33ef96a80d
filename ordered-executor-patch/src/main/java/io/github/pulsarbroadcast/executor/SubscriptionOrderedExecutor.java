package io.github.pulsarbroadcast.executor;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.bookkeeper.common.util.OrderedExecutor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An executor with one FIFO queue per thread that orders work per {@link SubscriptionKey}, and runs unordered
 * work (ACKs) on a random thread.
 *
 * <p><b>Guarantees.</b>
 * <ul>
 *   <li><b>Same key, same thread, FIFO.</b> Every task submitted with {@link #executeOrdered} for one key runs on
 *       the thread {@link #threadIndex(SubscriptionKey)}, one at a time, in the order the submissions happened
 *       (for submissions from one thread: program order; for concurrent submitters: the order in which their
 *       submissions took effect). A task therefore sees everything the earlier tasks of its key did.</li>
 *   <li><b>No ordering across keys.</b> Tasks of different keys may run in any order and, when the keys map to
 *       different threads, concurrently. Keys that share a thread also share its queue: a slow task delays every
 *       key on that thread.</li>
 *   <li><b>Unordered tasks</b> ({@link #executeUnordered}) go to a thread chosen uniformly at random
 *       ({@link ThreadLocalRandom}) on every call. They may run concurrently with anything, and before ordered
 *       tasks that were submitted earlier. Because the choice ignores queue lengths, an unordered task still waits
 *       behind the queue of the thread it lands on; with {@code numThreads == 1} there is no escape at all: every
 *       task shares the one queue.</li>
 *   <li><b>Failures are contained.</b> A task that throws is logged (SLF4J, at ERROR, with its key and thread) and
 *       counted in {@link #failedTasks()}; the thread goes on with the next task.</li>
 *   <li><b>Bounded queues</b> (when {@code maxQueuedTasksPerThread > 0}): a submission that would make a thread's
 *       queue longer than the bound throws {@link RejectedExecutionException} naming the key and the thread; the
 *       bound is exact even with concurrent submitters.</li>
 * </ul>
 *
 * <p><b>Threading model.</b> The threads are those of a wrapped BookKeeper {@link OrderedExecutor} (each one a
 * single-threaded pool with its own unbounded queue), renamed to {@code <name>-<index>} at start. This class picks
 * the thread itself ({@code OrderedExecutor.chooseThread(long)} with the thread index) so that
 * {@link #threadIndex(SubscriptionKey)} is the single source of truth for placement. All public methods are
 * thread-safe and may be called from any thread, including the executor's own threads, except
 * {@link #shutdown(Duration)} and {@link #close()}, which must not be called from the executor's threads.
 * The threads are daemon threads: call {@link #shutdown(Duration)} to run what is queued.
 */
public final class SubscriptionOrderedExecutor implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(SubscriptionOrderedExecutor.class);

    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(10);
    /** The longest shutdown timeout taken as given; longer ones wait this long (about 100 years). */
    private static final Duration MAX_TIMEOUT = Duration.ofDays(36_500);

    /** Immutable. */
    private final String name;
    /** Immutable; 0 means unbounded. */
    private final int maxQueuedTasksPerThread;
    /** Final reference to a thread-safe executor. */
    private final OrderedExecutor delegate;
    /** Written only in the constructor, before {@code this} is published; read-only afterwards. */
    private final Thread[] threads;
    /** Per-thread queue lengths and task statistics; thread-safe (see its threading model). */
    private final ThreadCounters counters;
    /** Immutable: what every task shares (the counters above, the failed-task count, the slow-task threshold). */
    private final OrderedTask.Accounting accounting;
    /** How long a shutdown that dropped the queues waits for the interrupted tasks to stop, at most (1 s). */
    private final long abandonGraceNanos;
    /** Guards {@link #shutdownReport}; held for the whole shutdown so that concurrent callers wait for it. */
    private final Object shutdownLock = new Object();
    /** Volatile: set once by {@link #shutdown(Duration)} (under {@link #shutdownLock}), read by submitters. */
    private volatile boolean shutdown;
    /** Guarded by {@link #shutdownLock}; null until the first shutdown completes. */
    private ShutdownReport shutdownReport;

    SubscriptionOrderedExecutor(SubscriptionOrderedExecutorBuilder builder) {
        this.name = builder.name;
        this.maxQueuedTasksPerThread = builder.maxQueuedTasksPerThread;
        this.counters = new ThreadCounters(builder.numThreads);
        this.accounting = new OrderedTask.Accounting(builder.name, counters, builder.slowTaskNanos);
        this.abandonGraceNanos = builder.abandonGraceNanos;
        this.delegate = OrderedExecutor.newBuilder()
                .name(builder.name)
                .numThreads(builder.numThreads)
                .threadFactory(SubscriptionOrderedExecutor::newDaemonThread)
                .build();
        this.threads = new Thread[builder.numThreads];
        try {
            for (int i = 0; i < threads.length; i++) {
                threads[i] = nameThread(i);
            }
        } catch (RuntimeException e) {
            delegate.shutdownNow();
            throw e;
        }
    }

    /**
     * Returns a builder with the defaults: name {@code broadcast-executor}, one thread per available processor,
     * unbounded queues.
     *
     * @return a new builder
     */
    public static SubscriptionOrderedExecutorBuilder builder() {
        return new SubscriptionOrderedExecutorBuilder();
    }

    /**
     * Runs {@code task} on the thread of {@code key}, after every task submitted earlier for that key.
     *
     * @param key the ordering key; not null
     * @param task the work; not null
     * @throws RejectedExecutionException if the executor is shut down, or the thread's queue is full
     */
    public void executeOrdered(SubscriptionKey key, Runnable task) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(task, "task");
        submit(threadIndex(key), key, task);
    }

    /**
     * Returns an {@link Executor} view that runs every task with {@link #executeOrdered(SubscriptionKey, Runnable)}
     * for {@code key}: handy for {@code CompletableFuture.thenRunAsync(..., executor)}. The view holds no state of
     * its own and is thread-safe.
     *
     * @param key the ordering key; not null
     * @return an executor pinned to the key's thread
     */
    public Executor orderedExecutor(SubscriptionKey key) {
        return new KeyExecutor(Objects.requireNonNull(key, "key"));
    }

    /**
     * Runs {@code task} on a thread chosen at random ({@link ThreadLocalRandom}), with no ordering towards any other
     * task: it may run concurrently with anything, and before ordered tasks submitted earlier.
     *
     * @param task the work; not null
     * @throws RejectedExecutionException if the executor is shut down, or the chosen thread's queue is full
     */
    public void executeUnordered(Runnable task) {
        Objects.requireNonNull(task, "task");
        int index = threads.length == 1 ? 0 : ThreadLocalRandom.current().nextInt(threads.length);
        submit(index, null, task);
    }

    /**
     * Returns the number of threads.
     *
     * @return the number of threads, at least 1
     */
    public int numThreads() {
        return threads.length;
    }

    /**
     * Returns the thread-name prefix given to the builder.
     *
     * @return the name; threads are called {@code <name>-<index>}
     */
    public String name() {
        return name;
    }

    /**
     * Returns the index of the thread that runs the ordered tasks of {@code key}: a pure function of the key's hash
     * code and {@link #numThreads()}.
     *
     * @param key the ordering key; not null
     * @return a thread index in {@code [0, numThreads())}
     */
    public int threadIndex(SubscriptionKey key) {
        return Math.floorMod(key.hashCode(), threads.length);
    }

    /**
     * Tells whether the calling thread is the thread that runs the ordered tasks of {@code key}.
     *
     * @param key the ordering key; not null
     * @return true iff the current thread is that key's thread
     */
    public boolean isOrderedThreadOf(SubscriptionKey key) {
        return Thread.currentThread() == threads[threadIndex(key)];
    }

    /**
     * Returns the number of tasks accepted for thread {@code threadIndex} that have not started yet (the running
     * task is not counted). A snapshot: it may be stale as soon as it is returned.
     *
     * @param threadIndex a thread index in {@code [0, numThreads())}
     * @return the queue length of that thread
     */
    public long queuedTasks(int threadIndex) {
        Objects.checkIndex(threadIndex, threads.length);
        return counters.queued(threadIndex);
    }

    /**
     * Returns the name of thread {@code threadIndex} ({@code <name>-<index>}).
     *
     * @param threadIndex a thread index in {@code [0, numThreads())}
     * @return the thread's name
     */
    public String threadName(int threadIndex) {
        Objects.checkIndex(threadIndex, threads.length);
        return threads[threadIndex].getName();
    }

    /**
     * Returns the number of tasks thread {@code threadIndex} has run (ordered and unordered, failed ones included).
     *
     * @param threadIndex a thread index in {@code [0, numThreads())}
     * @return the completed-task count of that thread
     */
    public long completedTasks(int threadIndex) {
        Objects.checkIndex(threadIndex, threads.length);
        return counters.completed(threadIndex);
    }

    /**
     * Returns the time thread {@code threadIndex} spent running tasks, in nanoseconds (wall-clock time of each task).
     *
     * @param threadIndex a thread index in {@code [0, numThreads())}
     * @return the total task time of that thread
     */
    public long taskNanos(int threadIndex) {
        Objects.checkIndex(threadIndex, threads.length);
        return counters.taskNanos(threadIndex);
    }

    /**
     * Returns the number of tasks of thread {@code threadIndex} that ran longer than the slow-task threshold
     * ({@link SubscriptionOrderedExecutorBuilder#slowTaskThreshold}); always 0 when the threshold is off.
     *
     * @param threadIndex a thread index in {@code [0, numThreads())}
     * @return the slow-task count of that thread
     */
    public long slowTasks(int threadIndex) {
        Objects.checkIndex(threadIndex, threads.length);
        return counters.slow(threadIndex);
    }

    /**
     * Returns the number of tasks that threw since the executor started. Each of them was logged.
     *
     * @return the failed-task count
     */
    public long failedTasks() {
        return accounting.failedTasks.sum();
    }

    /**
     * Tells whether {@link #shutdown(Duration)} has been called.
     *
     * @return true once the executor no longer accepts work
     */
    public boolean isShutdown() {
        return shutdown;
    }

    /**
     * Stops accepting work, waits up to {@code timeout} for every accepted task to run, then drops what is still
     * queued, interrupts what is still running and waits up to one more second for those to stop, so that once it
     * returns no task runs unless one ignored its interrupt that long (the report counts it). Idempotent: later
     * calls return the first call's report; a concurrent second call waits for the first.
     *
     * @param timeout how long to wait for the queues to drain, for all threads together (0: drop them at once;
     *                longer than 100 years: 100 years)
     * @return what ran and what did not
     * @throws IllegalArgumentException if {@code timeout} is negative
     * @throws IllegalStateException if called from one of this executor's threads (it would wait for itself)
     */
    public ShutdownReport shutdown(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative()) {
            throw new IllegalArgumentException(name + ": shutdown timeout " + timeout + " is negative (0 abandons"
                    + " the queued tasks at once)");
        }
        // Read before any state changes: toNanos() of a very long duration throws (capped at about 292 years).
        long timeoutNanos = timeout.compareTo(MAX_TIMEOUT) > 0 ? MAX_TIMEOUT.toNanos() : timeout.toNanos();
        for (Thread thread : threads) {
            if (thread == Thread.currentThread()) {
                throw new IllegalStateException(name + ": shutdown() called from its own thread " + thread.getName());
            }
        }
        synchronized (shutdownLock) {
            if (shutdownReport == null) {
                shutdown = true;
                delegate.shutdown();
                shutdownReport = Termination.awaitDrained(delegate, threads.length, System.nanoTime()
                        + timeoutNanos) ? new ShutdownReport(true, 0, 0)
                        : Termination.abandonRemaining(delegate, threads.length, accounting,
                        abandonGraceNanos);
                if (shutdownReport.drained()) {
                    LOG.info("{}: shut down, all queued tasks ran", name);
                } else {
                    LOG.warn("{}: not drained within {}: {}", name, timeout, shutdownReport);
                }
            }
            return shutdownReport;
        }
    }

    /** Shuts down with a 10-second timeout; see {@link #shutdown(Duration)}. */
    @Override
    public void close() {
        shutdown(CLOSE_TIMEOUT);
    }

    @Override
    public String toString() {
        return "SubscriptionOrderedExecutor{name=" + name + ", numThreads=" + threads.length
                + ", maxQueuedTasksPerThread=" + maxQueuedTasksPerThread + ", shutdown=" + shutdown + '}';
    }

    private void submit(int index, SubscriptionKey key, Runnable task) {
        if (shutdown) {
            throw new RejectedExecutionException(name + " is shut down; rejected " + describe(key, index));
        }
        OrderedTask ordered = new OrderedTask(accounting, index, key, task);
        reserve(index, key);
        try {
            delegate.chooseThread((long) index).execute(ordered);
        } catch (RejectedExecutionException e) {
            // The wrapped pool refuses work only once it is shut down: shutdown() raced with this submission.
            counters.unreserve(index);
            throw new RejectedExecutionException(name + " is shut down; rejected " + describe(key, index), e);
        } catch (RuntimeException | Error e) {
            counters.unreserve(index); // not queued (no memory for the queue's node): the slot is given back
            throw e;
        }
    }

    /** Counts one more queued task on thread {@code index}, or rejects when that would exceed the bound. */
    private void reserve(int index, SubscriptionKey key) {
        counters.reserve(index, maxQueuedTasksPerThread, queued -> new RejectedExecutionException(String.format(
                "%s: queue of thread %s is full (%d tasks queued, maxQueuedTasksPerThread=%d); rejected %s",
                name, threads[index].getName(), queued, maxQueuedTasksPerThread, describe(key, index))));
    }

    private String describe(SubscriptionKey key, int index) {
        return accounting.describe(key, index);
    }

    /** Renames thread {@code index} to {@code <name>-<index>} from inside it, and returns it. */
    private Thread nameThread(int index) {
        String threadName = name + "-" + index;
        try {
            return delegate.chooseThread((long) index).submit(() -> {
                Thread current = Thread.currentThread();
                current.setName(threadName);
                return current;
            }).get(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while starting thread " + threadName, e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("Could not start thread " + threadName, e);
        }
    }

    private static Thread newDaemonThread(Runnable runnable) {
        Thread thread = new Thread(runnable);
        thread.setDaemon(true);
        return thread;
    }

    /** The {@link Executor} view of one key. Immutable. */
    private final class KeyExecutor implements Executor {
        private final SubscriptionKey key;

        KeyExecutor(SubscriptionKey key) {
            this.key = key;
        }

        @Override
        public void execute(Runnable task) {
            executeOrdered(key, task);
        }

        @Override
        public String toString() {
            return name + " ordered view of " + key;
        }
    }
}
