package io.github.pulsarbroadcast.bench.core;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import java.util.zip.DataFormatException;
import org.HdrHistogram.AbstractHistogram;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/**
 * Latency histograms in milliseconds of the measured messages:
 * <ul>
 *   <li>end to end: receive time minus the message's <em>intended</em> send time (the producer's schedule, start +
 *       k x period, carried in the message on the monotonic clock that every process of this machine shares), so that
 *       a producer that falls behind its schedule cannot hide the delay (coordinated omission);</li>
 *   <li>from publish: receive time minus the publish time the client stamped when {@code sendAsync} ran (what the
 *       report showed before; kept beside it);</li>
 *   <li>publish to broker and broker to consumer, split at the broker's publish timestamp;</li>
 *   <li>for the backlog experiment, the end-to-end latency of the consumers that never paused, per window (before the
 *       pause, during it, during the catch-up).</li>
 * </ul>
 * Pairs still missing when the run ends can be recorded as at least their age ({@link #recordMissing}), so that they
 * weigh on the tail instead of vanishing from it. A consumer fleet in another JVM ships its histograms over with
 * {@link #writeTo}; {@link #mergeFrom} adds them here.
 *
 * <p>Threading: {@link #record} runs on many listener threads at once ({@link ConcurrentHistogram} is wait-free for
 * writers); {@link #window} is volatile, set by the main thread (pause, resume) and by whichever thread completes the
 * last catch-up; {@link #missing} and {@link #missingMinAgeMs} are written by the main thread only, after the run;
 * the main thread reads copies at the end.
 */
public final class LatencyRecorder {

    /** Backlog windows; {@link #NONE} when no pause is planned or it is over. */
    public static final int NONE = 0;
    public static final int BEFORE = 1;
    public static final int PAUSE = 2;
    public static final int CATCH_UP = 3;

    private static final long HIGHEST_MS = TimeUnit.HOURS.toMillis(1);

    private final ConcurrentHistogram endToEnd = newHistogram();
    private final ConcurrentHistogram fromPublish = newHistogram();
    private final ConcurrentHistogram publishToBroker = newHistogram();
    private final ConcurrentHistogram brokerToConsumer = newHistogram();
    private final ConcurrentHistogram[] others = {null, newHistogram(), newHistogram(), newHistogram()};
    private final ConcurrentHistogram[] all = {endToEnd, fromPublish, publishToBroker, brokerToConsumer, others[1],
        others[2], others[3]};
    private volatile int window = NONE;
    private long missing;
    private long missingMinAgeMs = -1;

    private static ConcurrentHistogram newHistogram() {
        return new ConcurrentHistogram(HIGHEST_MS, 3);
    }

    public void window(int w) {
        window = w;
    }

    public int window() {
        return window;
    }

    /**
     * Records one measured message received at {@code nowNanos} / {@code nowMs} (monotonic and epoch clocks) by a
     * consumer that is ({@code pauseGroup}) or is not in the pause group. {@code intendedNanos} is the intended send
     * time (0 when the message does not carry one: then the publish time stands in), {@code brokerPublishMs} the
     * broker's timestamp or a negative value when there is none.
     */
    public void record(long nowNanos, long nowMs, long intendedNanos, long publishMs, long brokerPublishMs,
            boolean pauseGroup) {
        long sincePublish = clamp(nowMs - publishMs);
        long e2e = intendedNanos > 0 ? clamp(TimeUnit.NANOSECONDS.toMillis(nowNanos - intendedNanos)) : sincePublish;
        endToEnd.recordValue(e2e);
        fromPublish.recordValue(sincePublish);
        if (brokerPublishMs >= 0) {
            publishToBroker.recordValue(clamp(brokerPublishMs - publishMs));
            brokerToConsumer.recordValue(clamp(nowMs - brokerPublishMs));
        }
        int w = window;
        if (w != NONE && !pauseGroup) {
            others[w].recordValue(e2e);
        }
    }

    /**
     * Records {@code count} measured (consumer, message) pairs that never arrived as being {@code ageMs} late (their
     * age when the run ended: a lower bound of their latency) in the end-to-end histogram.
     */
    public void recordMissing(long ageMs, long count) {
        long v = clamp(ageMs);
        endToEnd.recordValueWithCount(v, count);
        missing += count;
        missingMinAgeMs = missingMinAgeMs < 0 ? v : Math.min(missingMinAgeMs, v);
    }

    /** Pairs recorded by {@link #recordMissing}. */
    public long missing() {
        return missing;
    }

    /**
     * The smallest age a missing pair was recorded with, or -1: every end-to-end percentile at or above it may be a
     * missing pair's lower bound.
     */
    public long missingMinAgeMs() {
        return missingMinAgeMs;
    }

    private static long clamp(long ms) {
        return Math.max(0, Math.min(ms, HIGHEST_MS));
    }

    public Percentiles endToEnd() {
        return summary(endToEnd);
    }

    public Percentiles fromPublish() {
        return summary(fromPublish);
    }

    public Percentiles publishToBroker() {
        return summary(publishToBroker);
    }

    public Percentiles brokerToConsumer() {
        return summary(brokerToConsumer);
    }

    /** The non-paused consumers' latency in window {@code w} ({@link #BEFORE}, {@link #PAUSE}, {@link #CATCH_UP}). */
    public Percentiles others(int w) {
        return summary(others[w]);
    }

    /** A copy of the end-to-end histogram (ms), to subtract one from another (capacity steps). */
    public Histogram endToEndHistogram() {
        return copy(endToEnd);
    }

    /** Measured deliveries recorded so far (missing pairs not included). */
    public long deliveries() {
        return fromPublish.getTotalCount();
    }

    /** Live P99 of the end-to-end latency so far, for the progress bar. */
    public long liveP99() {
        return endToEnd.getTotalCount() == 0 ? 0 : endToEnd.getValueAtPercentile(99);
    }

    private static Percentiles summary(AbstractHistogram live) {
        return Percentiles.of(copy(live));
    }

    private static Histogram copy(AbstractHistogram live) {
        Histogram copy = new Histogram(HIGHEST_MS, 3);
        copy.add(live);
        return copy;
    }

    /** Writes every histogram (compressed) for {@link #mergeFrom} in another JVM. */
    public void writeTo(DataOutput out) throws IOException {
        for (ConcurrentHistogram h : all) {
            Histogram c = copy(h);
            ByteBuffer buf = ByteBuffer.allocate(c.getNeededByteBufferCapacity());
            int length = c.encodeIntoCompressedByteBuffer(buf);
            out.writeInt(length);
            out.write(buf.array(), 0, length);
        }
    }

    /** Adds the histograms that {@link #writeTo} wrote to these. */
    public void mergeFrom(DataInput in) throws IOException {
        for (ConcurrentHistogram h : all) {
            byte[] bytes = new byte[in.readInt()];
            in.readFully(bytes);
            try {
                h.add(Histogram.decodeFromCompressedByteBuffer(ByteBuffer.wrap(bytes), HIGHEST_MS));
            } catch (DataFormatException e) {
                throw new IOException("corrupt latency histogram", e);
            }
        }
    }

    /** Empties every histogram and forgets missing pairs (before merging a fresh copy of a fleet's). */
    public void reset() {
        for (ConcurrentHistogram h : all) {
            h.reset();
        }
        missing = 0;
        missingMinAgeMs = -1;
    }
}
