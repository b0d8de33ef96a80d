package io.github.pulsarbroadcast.broadcast.cnx;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Bounds the ack commands of one connection that wait to be applied on the executor. Stock Pulsar applies acks on
 * the connection's event loop, so a client that acks faster than the broker can apply them is slowed by TCP
 * back-pressure; here acks are handed to executor threads, and without a bound a flood of acks would become an
 * unbounded queue of tasks. When {@code max} acks wait, the connection stops reading ({@link Reads#pause}); when half
 * of them are applied, it reads again ({@link Reads#resume}, which respects the stock reasons to stay paused).
 *
 * <p>Threading: {@link #submitted} runs on the connection's event loop; {@link #applied} on executor threads. The
 * count is atomic; {@link #paused} is volatile, written on the event loop (pause and resume both run there).
 */
final class AckGate {

    /** How the gate pauses and resumes reading from the connection; both run on its event loop. */
    interface Reads {
        void pause();

        void resume();

        /** Runs a task on the connection's event loop. */
        void onEventLoop(Runnable task);
    }

    private final int max;
    private final Reads reads;
    private final AtomicInteger waiting = new AtomicInteger();
    private volatile boolean paused;

    AckGate(int max, Reads reads) {
        this.max = max;
        this.reads = reads;
    }

    /** One more ack waits to be applied. Event loop. */
    void submitted() {
        if (waiting.incrementAndGet() >= max) {
            paused = true;
            reads.pause();
        }
    }

    /** One ack was applied. Any thread. */
    void applied() {
        if (waiting.decrementAndGet() <= max / 2 && paused) {
            reads.onEventLoop(this::resumeIfDrained);
        }
    }

    private void resumeIfDrained() {
        if (paused && waiting.get() <= max / 2) {
            paused = false;
            reads.resume();
        }
    }

    int waiting() {
        return waiting.get();
    }

    boolean isPaused() {
        return paused;
    }
}
