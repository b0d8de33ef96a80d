package io.github.pulsarbroadcast.broadcast.dispatch;

import java.util.concurrent.Executor;

/**
 * Where a subscription's dispatch work runs: {@link #post} runs tasks one at a time in the order posted (the
 * subscription's thread of the subscription-keyed executor), {@link #schedule} posts a task after a delay,
 * {@link #background} runs work too long for the dispatch thread elsewhere, and {@link #wallMillis} tells the time.
 *
 * <p>Threading: every method may be called from any thread.
 */
public interface DispatchLoop {

    void post(Runnable task);

    void schedule(Runnable task, long delayMs);

    /**
     * Where work that would hold the dispatch thread too long runs, in no particular order with the dispatch work:
     * the periodic save of every consumer's position (capture and encoding: about 50 ms at 100,000 consumers, more
     * before the JIT has compiled it). The broker uses one thread of the plugin's for it; by default the work runs
     * at once on the caller's thread.
     */
    default Executor background() {
        return Runnable::run;
    }

    /** {@code task} with a {@code toString} of {@code description}, for the executor's slow-task warnings. */
    static Runnable named(String description, Runnable task) {
        return new Runnable() {
            @Override
            public void run() {
                task.run();
            }

            @Override
            public String toString() {
                return description;
            }
        };
    }

    /** Wall-clock milliseconds (saved expiry times of retained positions); the model tests use their own clock. */
    default long wallMillis() {
        return System.currentTimeMillis();
    }
}
