package io.github.pulsarbroadcast.broadcast.dispatch;

/**
 * Where a subscription's dispatch work runs: {@link #post} runs tasks one at a time in the order posted (the
 * subscription's thread of the subscription-keyed executor), {@link #schedule} posts a task after a delay, and
 * {@link #wallMillis} tells the time.
 *
 * <p>Threading: every method may be called from any thread.
 */
public interface DispatchLoop {

    void post(Runnable task);

    void schedule(Runnable task, long delayMs);

    /** Wall-clock milliseconds (saved expiry times of retained positions); the model tests use their own clock. */
    default long wallMillis() {
        return System.currentTimeMillis();
    }
}
