package io.github.pulsarbroadcast.broadcast.cnx;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * Bounds the ack commands of one connection that wait to be applied on the executor. Stock Pulsar applies acks on
 * the connection's event loop, so a client that acks faster than the broker can apply them is slowed by TCP
 * back-pressure; here acks are handed to executor threads, and without a bound a flood of acks would become an
 * unbounded queue of tasks. When {@code max} acks wait, the connection stops reading ({@link Reads#pause}); when half
 * of them are applied, it reads again ({@link Reads#resume}, which respects the stock reasons to stay paused).
 *
 * <p>Each time the gate closes it counts one pause in {@code pauses}, which the broker's connections share (the metric
 * {@code pulsar_broadcast_ack_read_pauses_total}: acks arriving faster than the executor applies them).
 *
 * <p>Threading: {@link #submitted} runs on the connection's event loop; {@link #applied} on executor threads. The
 * count is atomic; {@link #paused} is volatile, written on the event loop (pause and resume both run there);
 * {@code pauses} is a {@link LongAdder} shared by every connection of the broker.
 */
final class AckGate {

    /** How the gate pauses and resumes reading from the connection; both run on its event loop. */
    interface Reads {
        void pause();

        void resume();

        /** Runs a task on the connection's event loop. */
        void onEventLoop(Runnable task);

        /** The three as functions. */
        static Reads of(Runnable pause, Runnable resume, Executor eventLoop) {
            return new Reads() {
                @Override
                public void pause() {
                    pause.run();
                }

                @Override
                public void resume() {
                    resume.run();
                }

                @Override
                public void onEventLoop(Runnable task) {
                    eventLoop.execute(task);
                }
            };
        }
    }

    private final int max;
    private final Reads reads;
    private final LongAdder pauses;
    private final AtomicInteger waiting = new AtomicInteger();
    private volatile boolean paused;

    AckGate(int max, Reads reads, LongAdder pauses) {
        this.max = max;
        this.reads = reads;
        this.pauses = pauses;
    }

    /**
     * One more ack waits to be applied. Event loop. Over the bound every ack asks again to stop reading (stock code
     * may have resumed the reads for its own reasons meanwhile); only the first one counts a pause.
     */
    void submitted() {
        if (waiting.incrementAndGet() >= max) {
            if (!paused) {
                paused = true;
                pauses.increment();
            }
            reads.pause();
            // No wake-up is lost to acks applied between the count above and the flag (a review, forty-sixth session,
            // asked): this ack is handed to the executor only after the flag is set (submit), and the last
            // one applied sees it and the count at or below half.
        }
    }

    /**
     * Runs {@code apply} (one ack) on {@code executor}, counted while it waits; when the executor refuses it (it shuts
     * down, or a bounded queue is full), here, and the gate told (it would hold the connection's reads). Event loop.
     */
    void submit(Runnable apply, Executor executor) {
        submitted();
        try {
            executor.execute(() -> {
                try {
                    apply.run();
                } finally {
                    applied();
                }
            });
        } catch (RejectedExecutionException e) {
            applied();
            apply.run();
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
