package io.github.pulsarbroadcast.bench.core;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicLongArray;
import org.HdrHistogram.Histogram;

/**
 * Per message: how long until the <em>last</em> consumer had it (the worst end-to-end latency over the consumers,
 * from the intended send time), the sum of all its consumers' latencies and how many got it. With 30-60 messages a
 * run, a P99 over (consumer, message) pairs is set by one or two messages; the distribution of the per-message worst
 * fan-out and the latency over the run say what happened to each.
 *
 * <p>Threading: {@link #record} runs on any number of receiving threads (atomic arrays, updated lock-free);
 * {@link #recordMissing}, {@link #mergeFrom} and the readers run on the main thread after the run's receivers are
 * quiet.
 */
public final class FanOut {

    private final AtomicLongArray worstMs;
    private final AtomicLongArray sumMs;
    private final AtomicLongArray count;

    /** Room for sequence numbers {@code 0 .. messages - 1}. */
    public FanOut(int messages) {
        worstMs = new AtomicLongArray(messages);
        sumMs = new AtomicLongArray(messages);
        count = new AtomicLongArray(messages);
    }

    public int messages() {
        return worstMs.length();
    }

    /** One consumer received message {@code seq} {@code latencyMs} after its intended send time. */
    public void record(int seq, long latencyMs) {
        if (seq < 0 || seq >= worstMs.length()) {
            return;
        }
        worstMs.accumulateAndGet(seq, latencyMs, Math::max);
        sumMs.addAndGet(seq, latencyMs);
        count.incrementAndGet(seq);
    }

    /** Some consumers never got message {@code seq}, {@code ageMs} old at the end: its worst is at least that. */
    public void recordMissing(int seq, long ageMs) {
        if (seq >= 0 && seq < worstMs.length()) {
            worstMs.accumulateAndGet(seq, ageMs, Math::max);
        }
    }

    /** Worst latency of message {@code seq} in ms (0 when no consumer got it and none was recorded missing). */
    public long worstMs(int seq) {
        return worstMs.get(seq);
    }

    /** Mean latency over the consumers that got message {@code seq}, or -1 when none did. */
    public double meanMs(int seq) {
        long n = count.get(seq);
        return n == 0 ? -1 : (double) sumMs.get(seq) / n;
    }

    /** The distribution of the per-message worst latency over messages {@code from .. to - 1}. */
    public Percentiles worstDistribution(int from, int to) {
        Histogram h = new Histogram(3);
        for (int seq = Math.max(0, from); seq < Math.min(to, worstMs.length()); seq++) {
            if (count.get(seq) > 0 || worstMs.get(seq) > 0) {
                h.recordValue(worstMs.get(seq));
            }
        }
        return Percentiles.of(h);
    }

    public void writeTo(DataOutput out) throws IOException {
        out.writeInt(worstMs.length());
        for (int i = 0; i < worstMs.length(); i++) {
            out.writeLong(worstMs.get(i));
            out.writeLong(sumMs.get(i));
            out.writeLong(count.get(i));
        }
    }

    /** Adds what {@link #writeTo} wrote: the worst of both, sums and counts added. */
    public void mergeFrom(DataInput in) throws IOException {
        int n = in.readInt();
        for (int i = 0; i < n; i++) {
            long worst = in.readLong();
            long sum = in.readLong();
            long c = in.readLong();
            if (i < worstMs.length()) {
                worstMs.accumulateAndGet(i, worst, Math::max);
                sumMs.addAndGet(i, sum);
                count.addAndGet(i, c);
            }
        }
    }

    /** Forgets everything (before merging fresh copies of the fleets'). */
    public void reset() {
        for (int i = 0; i < worstMs.length(); i++) {
            worstMs.set(i, 0);
            sumMs.set(i, 0);
            count.set(i, 0);
        }
    }
}
