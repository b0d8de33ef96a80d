package io.github.pulsarbroadcast.bench;

import io.github.pulsarbroadcast.bench.core.Percentiles;
import java.util.BitSet;
import java.util.concurrent.CompletableFuture;

/**
 * Where a run's messages come from: the producer ({@link Publisher}) or, in the floor mode, the floor server
 * ({@link FloorSource}). Message {@code k} is due at {@link #intendedNanos}{@code (k)} = start + k x period; a source
 * that falls behind still sends every message, and the latency counts from the intended time, so that the delay
 * shows.
 *
 * <p>Threading: the main thread calls every method; implementations say which other threads they use.
 */
interface MessageSource extends AutoCloseable {

    /** Starts sending now. */
    void start();

    long startNanos();

    /** When message {@code seq} was due ({@link System#nanoTime}). */
    long intendedNanos(int seq);

    /** Completes when every message sent has been acknowledged or has failed, after the last or after {@link #stop}. */
    CompletableFuture<Void> done();

    /** Messages sent so far. */
    int sent();

    /** The highest sequence number sent so far, or -1. */
    default int lastSentSeq() {
        return sent() - 1;
    }

    /** When the last message was sent ({@link System#nanoTime}). */
    long lastSendNanos();

    /** When the first measured message was sent, or 0 before. */
    long firstMeasuredSendNanos();

    int failed();

    String firstError();

    /** The sequence numbers that made it (acknowledged by the broker), a copy. */
    BitSet acked();

    /** Stops sending: messages not sent yet never will be. */
    void stop();

    /** How late each send ran after its intended time (ms). */
    Percentiles sendLag();

    /** Sends refused at once because too many were pending (the run is then invalid). */
    int rejected();

    @Override
    void close();
}
