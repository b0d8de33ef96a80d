package io.github.pulsarbroadcast.broadcast.cnx;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides which failed broadcast subscribes of one broker are logged at WARN: the first in each
 * {@link #INTERVAL_NANOS} window, with the number of failures since the previous WARN; the others go to DEBUG. After a
 * crash, 100,000 consumers retry their subscribes against a broker that cannot serve the topic yet (the dead broker's
 * session still owns it): one WARN per attempt was 277,237 lines (97 MB) in 30 s, measured on the process cluster
 * (benchmarks.md, "Reconnect storm after a crash"). Stock Pulsar logs one line per failed subscribe.
 *
 * <p>Threading: any thread (the connections' event loops); {@link #windowStart}, {@link #failures} and
 * {@link #reportedUpTo} are atomics. Counting: every failure takes a number from {@link #failures} first; a WARN
 * reports the failures numbered between the previous WARN's and its own, so a failure counted by another thread
 * while a WARN is being decided is reported by the next WARN, never lost (a reset of a shared counter at the WARN
 * lost such concurrent counts: {@code SubscribeFailuresTest.concurrentFailuresGiveOneWarningAndLoseNoCount}).
 */
final class SubscribeFailures {

    private static final Logger log = LoggerFactory.getLogger(SubscribeFailures.class);
    static final long INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final LongSupplier nanoClock;
    /** When the current window's WARN was logged; {@link Long#MIN_VALUE} before the first failure. */
    private final AtomicLong windowStart = new AtomicLong(Long.MIN_VALUE);
    /** Failures so far; each failure's number is the value its increment returned. */
    private final AtomicLong failures = new AtomicLong();
    /** The number of the failure last logged at WARN (0 before the first). */
    private final AtomicLong reportedUpTo = new AtomicLong();

    SubscribeFailures(LongSupplier nanoClock) {
        this.nanoClock = nanoClock;
    }

    /**
     * A subscribe failed: returns -1 when this failure goes to DEBUG, else the number of failures logged at DEBUG
     * since the previous WARN (this one is to be logged at WARN with that number).
     */
    long failed() {
        long number = failures.incrementAndGet();
        long now = nanoClock.getAsLong();
        long start = windowStart.get();
        if ((start == Long.MIN_VALUE || now - start >= INTERVAL_NANOS) && windowStart.compareAndSet(start, now)) {
            long previous = reportedUpTo.getAndAccumulate(number, Math::max);
            return Math.max(0, number - 1 - previous);
        }
        return -1;
    }

    /** Logs a failed subscribe of {@code subscription} on {@code topic}: at WARN when {@link #failed} says so. */
    void log(String topic, String subscription, Throwable cause) {
        long unlogged = failed();
        if (unlogged >= 0) {
            log.warn("[{}][{}] Broadcast subscribe failed: {} ({} more failed subscribes on this broker since the last"
                    + " of these warnings, logged at DEBUG)", topic, subscription, cause.getMessage(), unlogged);
        } else if (log.isDebugEnabled()) {
            log.debug("[{}][{}] Broadcast subscribe failed: {}", topic, subscription, cause.getMessage());
        }
    }
}
