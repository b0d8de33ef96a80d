package io.github.pulsarbroadcast.cluster;

import java.util.Arrays;
import java.util.BitSet;

/**
 * What one consumer received: every sequence number with the time it arrived (milliseconds of {@link Millis}), in
 * arrival order, and running counts that the waits read cheaply: the lowest sequence number not received yet, the
 * highest received, and how often a message arrived more than one past the highest so far (a gap, which would mean a
 * lost or reordered message).
 *
 * <p>Threading: {@link #record} runs on the consumer's listener thread; the test thread reads. Every method is
 * synchronized on the recorder.
 */
final class Recorder {

    private final String name;
    private final BitSet received = new BitSet();
    private int[] seqs = new int[4096];
    private int[] times = new int[4096];
    private int size;
    private int firstMissing;
    private int max = -1;
    private int gaps;
    private String firstGap;

    Recorder(String name) {
        this.name = name;
    }

    String name() {
        return name;
    }

    synchronized void record(int seq, int timeMs) {
        if (size == seqs.length) {
            seqs = Arrays.copyOf(seqs, size * 2);
            times = Arrays.copyOf(times, size * 2);
        }
        seqs[size] = seq;
        times[size] = timeMs;
        size++;
        if (seq > max + 1 && max >= 0) {
            gaps++;
            if (firstGap == null) {
                firstGap = "after " + max + " came " + seq + " at " + timeMs + " ms";
            }
        }
        max = Math.max(max, seq);
        received.set(seq);
        while (received.get(firstMissing)) {
            firstMissing++;
        }
    }

    /**
     * Starts the no-gap check afresh from the next message: for a consumer that legitimately missed messages (a
     * stock Failover subscription serves only its active consumer), so that later checks cover what follows only.
     */
    synchronized void rebase() {
        max = -1;
    }

    /** Every sequence number below this one arrived (at least once). */
    synchronized int firstMissing() {
        return firstMissing;
    }

    synchronized int max() {
        return max;
    }

    synchronized int size() {
        return size;
    }

    synchronized int gaps() {
        return gaps;
    }

    synchronized String firstGap() {
        return firstGap;
    }

    synchronized boolean has(int seq) {
        return received.get(seq);
    }

    /** How many of the sequence numbers in [from, to] never arrived. */
    synchronized int missingIn(int from, int to) {
        int missing = 0;
        for (int s = from; s <= to; s++) {
            if (!received.get(s)) {
                missing++;
            }
        }
        return missing;
    }

    /** A copy of the arrivals from index {@code from} on: sequence numbers and times. */
    synchronized int[][] since(int from) {
        return new int[][] {Arrays.copyOfRange(seqs, from, size), Arrays.copyOfRange(times, from, size)};
    }

    /** A copy of every arrival's sequence number before index {@code to}. */
    synchronized int[] seqsBefore(int to) {
        return Arrays.copyOf(seqs, to);
    }

    @Override
    public synchronized String toString() {
        return name + ": " + size + " received, every one below " + firstMissing + ", highest " + max + ", "
                + gaps + " gaps" + (firstGap == null ? "" : " (first " + firstGap + ")");
    }
}
