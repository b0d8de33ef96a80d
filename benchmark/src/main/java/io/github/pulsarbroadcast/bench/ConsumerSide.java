package io.github.pulsarbroadcast.bench;

import java.io.IOException;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * The N consumers of one run, whoever simulates them: the stock Java client in this JVM ({@link JavaConsumers}) or
 * the consumer fleet in processes of its own ({@link FleetProcesses}). The run drives them through this interface
 * and reads what they received from its {@link io.github.pulsarbroadcast.bench.core.Deliveries} after
 * {@link #collect}.
 *
 * <p>Threading: the main thread calls every method; implementations say which other threads they use.
 */
interface ConsumerSide {

    /** How the connect phase ended. Threading: filled and read by the main thread. */
    final class Outcome {
        int connected;
        int failed;
        long elapsedMs;
        boolean timedOut;
        String firstError;
    }

    /**
     * Connects every consumer, or stops at the deadline or as soon as {@code healthy} says false (the broker died,
     * a JVM ran out of memory). {@code tick} runs about every 200 ms (progress bar).
     */
    Outcome connect(BooleanSupplier healthy, Runnable tick) throws InterruptedException;

    int connected();

    /** Distinct (consumer, message) pairs received so far. */
    long firstReceipts();

    /** When the last first receipt happened ({@link System#nanoTime}). */
    long lastReceiptNanos();

    /** Paused consumers that have not caught up yet. */
    int catchingUp();

    /** Live P99 end-to-end latency (ms), for the progress bar. */
    long liveP99();

    /** Consumers subscribed now, or -1 when this side does not count them (the Java client). */
    default int active() {
        return -1;
    }

    /** Successful subscribes so far, the first ones and every reconnect's; -1 when not counted. */
    default long subscribes() {
        return -1;
    }

    /** Sets the backlog experiment's latency window. */
    void window(int window);

    /** Pauses the consumers of the pause group (their indexes are {@code indexes}). */
    void pause(List<Integer> indexes);

    /** Resumes them; each must then catch up with every message up to {@code targetSeq}. */
    void resume(List<Integer> indexes, int targetSeq);

    /**
     * Brings the run's trackers, histograms and fan-out in this JVM up to date (a no-op where the consumers live in
     * this JVM) and returns the fleet's own counters, or null.
     */
    io.github.pulsarbroadcast.bench.fleet.FleetState collect() throws IOException, InterruptedException;

    /** Closes every consumer politely and waits up to {@code seconds}. */
    void close(long seconds);

    /** Drops everything at once (the broker is about to be stopped anyway). */
    void abandon();

    /** Processes other than this JVM whose CPU is the consumers' (fleet processes); empty for the Java client. */
    List<Long> pids();

    /** Why the consumers can no longer work (a fleet process died), or null. */
    String trouble();
}
