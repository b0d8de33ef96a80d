package io.github.pulsarbroadcast.broadcast.metrics;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * The timing of one fan-out pass of new entries, from the moment the dispatch thread starts it to the moment the
 * first and the last of its connections have written (and flushed) their messages. Each connection's send calls
 * {@link #written} once when its event loop has written; the first call records "dispatch to first write", the
 * last one "dispatch to last write", each counted once per entry of the pass.
 *
 * <p>Contract: exactly {@code connections} calls of {@link #written} or {@link #abandoned} are expected; a send that
 * never runs (its connection closed) must call {@link #abandoned}, or the last-write stage of its pass is never
 * recorded (nothing else is lost).
 *
 * <p>Threading: created on the dispatch thread and published to event loops with the sends (their executor's
 * hand-off); {@link #remaining} and {@link #firstDone} are atomic, everything else final.
 */
public final class PassTiming {

    private final long startNanos;
    private final int entries;
    private final LatencyHistogram toFirst;
    private final LatencyHistogram toLast;
    private final AtomicInteger remaining;
    /** 0 until the first write was recorded; atomic. */
    private final AtomicInteger firstDone = new AtomicInteger();

    /**
     * @param startNanos  when the pass started ({@code System.nanoTime})
     * @param entries     entries the pass sends (each counted in the histograms)
     * @param connections sends handed to connections
     */
    public PassTiming(long startNanos, int entries, int connections, LatencyHistogram toFirst,
                      LatencyHistogram toLast) {
        this.startNanos = startNanos;
        this.entries = entries;
        this.toFirst = toFirst;
        this.toLast = toLast;
        this.remaining = new AtomicInteger(connections);
    }

    /** One connection has written its part of the pass at {@code nowNanos}. */
    public void written(long nowNanos) {
        if (firstDone.get() == 0 && firstDone.compareAndSet(0, 1)) {
            toFirst.recordNanos(nowNanos - startNanos, entries);
        }
        if (remaining.decrementAndGet() == 0) {
            toLast.recordNanos(nowNanos - startNanos, entries);
        }
    }

    /** One connection's part was dropped without writing (its connection is gone). */
    public void abandoned() {
        remaining.decrementAndGet();
    }
}
