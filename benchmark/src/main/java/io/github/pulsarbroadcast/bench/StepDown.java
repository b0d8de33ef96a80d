package io.github.pulsarbroadcast.bench;

import io.github.pulsarbroadcast.bench.core.FanOut;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.function.IntToLongFunction;
import org.HdrHistogram.Histogram;

/**
 * The figures of a capacity run's step back down (after the first step that failed, the highest rate that passed
 * again): how long the broker takes to return to the latency it had at that rate before it was overloaded. The step's
 * messages are cut into slices by their intended send time; a slice's figure is the P99 of its messages' worst
 * fan-out (each message's latency at its last consumer), the same figure as the earlier step's worst fan-out P99,
 * which sets the level to return to. Recovered from the first slice after which no slice is above 1.2 times that
 * level (and never less than 50 ms above it: at a few hundred ms one burst more or less moves a slice that much).
 *
 * <p>Threading: the main thread only.
 */
final class StepDown {

    static final int SLICE_SECONDS = 5;

    private StepDown() {
    }

    /** The level a slice must not pass to count as recovered, from the earlier step's worst fan-out P99 (ms). */
    static long level(long earlierWorstP99) {
        return Math.max(Math.round(earlierWorstP99 * 1.2), earlierWorstP99 + 50);
    }

    /**
     * Slices the step's messages {@code [firstSeq, firstSeq + count)} by their intended send time
     * ({@code dueNanos}, from the step's start): {@code [slice start (s), P99 of the worst fan-out (ms)]} per slice
     * that had messages. Only messages the broker took ({@code published}) count; one that no consumer got counts as
     * the slowest.
     */
    static List<long[]> slices(FanOut fanOut, IntToLongFunction dueNanos, BitSet published, int firstSeq,
                               int count) {
        List<long[]> slices = new ArrayList<>();
        Histogram h = new Histogram(3_600_000L, 2);
        long sliceNanos = SLICE_SECONDS * 1_000_000_000L;
        long current = 0;
        for (int seq = firstSeq; seq < firstSeq + count && seq < fanOut.messages(); seq++) {
            long slice = dueNanos.applyAsLong(seq) / sliceNanos;
            if (slice != current && h.getTotalCount() > 0) {
                slices.add(new long[] {current * SLICE_SECONDS, h.getValueAtPercentile(99)});
                h.reset();
            }
            current = slice;
            if (!published.get(seq)) {
                continue;
            }
            boolean nobody = fanOut.meanMs(seq) < 0 && fanOut.worstMs(seq) == 0;
            h.recordValue(nobody ? h.getHighestTrackableValue()
                    : Math.min(fanOut.worstMs(seq), h.getHighestTrackableValue()));
        }
        if (h.getTotalCount() > 0) {
            slices.add(new long[] {current * SLICE_SECONDS, h.getValueAtPercentile(99)});
        }
        return slices;
    }

    /**
     * Seconds from the step's start until the slices stay at or below {@code level}: the start of the first slice
     * after which none is above it; null when the last slice is still above it.
     */
    static Long recoveredAfter(List<long[]> slices, long level) {
        Long recovered = null;
        for (long[] slice : slices) {
            if (slice[1] > level) {
                recovered = null;
            } else if (recovered == null) {
                recovered = slice[0];
            }
        }
        return recovered;
    }
}
