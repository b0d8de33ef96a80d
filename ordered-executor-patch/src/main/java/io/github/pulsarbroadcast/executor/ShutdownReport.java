package io.github.pulsarbroadcast.executor;

/**
 * What {@link SubscriptionOrderedExecutor#shutdown(java.time.Duration)} achieved.
 *
 * <p>Either every accepted task ran ({@link #drained()} is true and both counts are 0), or the timeout expired:
 * then the tasks still queued were dropped without running ({@link #abandonedTasks()}) and the tasks running at
 * that moment were interrupted ({@link #interruptedTasks()}): counted as they stopped, and those still running a
 * second later too. Whether an interrupted task finished its work is up to the task.
 *
 * <p><b>Threading model.</b> Immutable: every field is final, so instances may be shared between threads.
 */
public final class ShutdownReport {

    /** Immutable. */
    private final boolean drained;
    /** Immutable. */
    private final int abandonedTasks;
    /** Immutable. */
    private final int interruptedTasks;

    ShutdownReport(boolean drained, int abandonedTasks, int interruptedTasks) {
        this.drained = drained;
        this.abandonedTasks = abandonedTasks;
        this.interruptedTasks = interruptedTasks;
    }

    /**
     * Tells whether every accepted task ran before the timeout.
     *
     * @return true iff all queued work ran and every thread stopped in time
     */
    public boolean drained() {
        return drained;
    }

    /**
     * Returns the number of accepted tasks that never started: they were still queued when the timeout expired.
     *
     * @return 0 when {@link #drained()}
     */
    public int abandonedTasks() {
        return abandonedTasks;
    }

    /**
     * Returns the number of tasks that were running when the timeout expired and were interrupted (one a thread had
     * just taken off its queue included: it runs interrupted).
     *
     * @return 0 when {@link #drained()}
     */
    public int interruptedTasks() {
        return interruptedTasks;
    }

    @Override
    public String toString() {
        return "ShutdownReport{drained=" + drained + ", abandonedTasks=" + abandonedTasks + ", interruptedTasks="
                + interruptedTasks + '}';
    }
}
