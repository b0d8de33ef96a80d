package io.github.pulsarbroadcast.cluster;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;

import java.util.Arrays;
import java.util.BitSet;
import java.util.List;

/**
 * The figures of one fault, from what the consumers recorded between a {@link Mark} taken just before the fault and
 * the moment every consumer has caught up again:
 * <ul>
 *   <li><b>receiving again</b>: the time from the mark until a consumer receives a message published once the fault
 *       was in place, so it counts the time the publisher could not store messages too (the time to recover);</li>
 *   <li><b>longest silence</b> of a consumer: its longest time without any message in the window (from the mark to
 *       its first arrival, or between two arrivals; 50 ms at 20 msg/s when nothing goes wrong);</li>
 *   <li><b>duplicates</b> of a consumer: arrivals in the window of a message it had received before;</li>
 *   <li><b>lost</b>: messages in the checked range that a consumer never received; <b>gaps</b>: arrivals more than one
 *       past the consumer's highest so far (a skipped or reordered message), counted in the window.</li>
 * </ul>
 *
 * <p>Threading: immutable once measured; the test thread builds it.
 */
final class FaultFigures {

    private final String fault;
    private final int[] againMs;
    private final int[] recoveryMs;
    private final int[] duplicates;
    private final int lost;
    private final int gaps;
    private final int publishWaitMs;
    private final int messages;
    private String gapExample = "";

    private FaultFigures(String fault, int[] againMs, int[] recoveryMs, int[] duplicates, int lost, int gaps,
                         int publishWaitMs, int messages) {
        this.fault = fault;
        this.againMs = againMs;
        this.recoveryMs = recoveryMs;
        this.duplicates = duplicates;
        this.lost = lost;
        this.gaps = gaps;
        this.publishWaitMs = publishWaitMs;
        this.messages = messages;
    }

    /** Where the fleet and the publisher stood just before a fault. */
    static final class Mark {
        final int timeMs;
        final int seq;
        final int[] index;
        final int[] gaps;
        /** The first message issued once the fault was in place ({@link ChaosTestBase#observe} sets it). */
        int faultSeq;

        Mark(Fleet fleet, Publisher publisher) {
            List<Recorder> recorders = fleet.recorders();
            index = new int[recorders.size()];
            gaps = new int[recorders.size()];
            for (int i = 0; i < index.length; i++) {
                index[i] = recorders.get(i).size();
                gaps[i] = recorders.get(i).gaps();
            }
            seq = publisher.issued();
            faultSeq = seq;
            timeMs = Millis.now();
        }
    }

    /**
     * Measures the window from {@code mark} to now; messages {@code lossFrom} to {@code lossTo} (inclusive) must
     * have reached every consumer.
     */
    static FaultFigures measure(String fault, Mark mark, Fleet fleet, Publisher publisher, int lossFrom, int lossTo) {
        List<Recorder> recorders = fleet.recorders();
        int[] again = new int[recorders.size()];
        int[] recovery = new int[recorders.size()];
        int[] dups = new int[recorders.size()];
        int lost = 0;
        int gaps = 0;
        String gapExample = "";
        for (int i = 0; i < recorders.size(); i++) {
            Recorder r = recorders.get(i);
            int[][] window = r.since(mark.index[i]);
            recovery[i] = recovery(window, mark);
            again[i] = again(window, mark);
            dups[i] = duplicates(r.seqsBefore(mark.index[i]), window[0]);
            lost += r.missingIn(lossFrom, lossTo);
            if (r.gaps() > mark.gaps[i] && gaps == 0) {
                gapExample = " (" + r + ")";
            }
            gaps += r.gaps() - mark.gaps[i];
        }
        FaultFigures figures = new FaultFigures(fault, again, recovery, dups, lost, gaps,
                publisher.longestWaitMs(mark.seq, publisher.storedBelow()), publisher.storedBelow() - mark.seq);
        figures.gapExample = gapExample;
        return figures;
    }

    /** From the mark to the first arrival of a message issued once the fault was in place; -1 if none arrived. */
    private static int again(int[][] window, Mark mark) {
        for (int k = 0; k < window[0].length; k++) {
            if (window[0][k] >= mark.faultSeq) {
                return window[1][k] - mark.timeMs;
            }
        }
        return -1;
    }

    private static int recovery(int[][] window, Mark mark) {
        if (window[1].length == 0) {
            return -1;
        }
        int longest = window[1][0] - mark.timeMs;
        for (int k = 1; k < window[1].length; k++) {
            longest = Math.max(longest, window[1][k] - window[1][k - 1]);
        }
        return longest;
    }

    private static int duplicates(int[] before, int[] window) {
        BitSet seen = new BitSet();
        for (int s : before) {
            seen.set(s);
        }
        int dups = 0;
        for (int s : window) {
            if (seen.get(s)) {
                dups++;
            }
            seen.set(s);
        }
        return dups;
    }

    /** The longest silence of any consumer, ms (-1 if one received nothing in the window). */
    int maxRecoveryMs() {
        return Arrays.stream(recoveryMs).anyMatch(v -> v < 0) ? -1 : Arrays.stream(recoveryMs).max().orElse(0);
    }

    /** The slowest consumer's time to receive again, ms (-1 if one never received a message issued after it). */
    int maxAgainMs() {
        return Arrays.stream(againMs).anyMatch(v -> v < 0) ? -1 : Arrays.stream(againMs).max().orElse(0);
    }

    int maxDuplicates() {
        return Arrays.stream(duplicates).max().orElse(0);
    }

    /** Nearest-rank percentile. */
    static int percentile(int[] values, double p) {
        int[] sorted = values.clone();
        Arrays.sort(sorted);
        if (sorted.length == 0) {
            return 0;
        }
        int rank = (int) Math.ceil(p / 100.0 * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }

    /** One line for the build log and docs/install.md. */
    String line() {
        return String.format("FAULT %s: %d consumers, %d messages in the window; receiving again after P50 %.1f s, "
                        + "P99 %.1f s, max %.1f s; longest silence per consumer P50 %.1f s, P99 %.1f s, max %.1f s; "
                        + "duplicates per consumer P50 %d, P99 %d, max %d; lost %d; gaps %d%s; "
                        + "longest publish wait %.1f s",
                fault, recoveryMs.length, messages, percentile(againMs, 50) / 1000.0,
                percentile(againMs, 99) / 1000.0, maxAgainMs() / 1000.0, percentile(recoveryMs, 50) / 1000.0,
                percentile(recoveryMs, 99) / 1000.0, maxRecoveryMs() / 1000.0, percentile(duplicates, 50),
                percentile(duplicates, 99), maxDuplicates(), lost, gaps, gapExample, publishWaitMs / 1000.0);
    }

    /** Prints {@link #line()} and asserts the stated bounds. */
    FaultFigures print() {
        System.out.println(line());
        return this;
    }

    void assertBounds(int maxRecoverySeconds, int maxDuplicatesPerConsumer) {
        assertEquals(lost, 0, "messages lost: " + line());
        assertEquals(gaps, 0, "gaps (skipped or reordered messages): " + line());
        int max = Math.max(maxAgainMs(), maxRecoveryMs());
        assertTrue(maxAgainMs() >= 0 && maxRecoveryMs() >= 0,
                "a consumer never received a message published after the fault: " + line());
        assertTrue(max <= maxRecoverySeconds * 1000, "recovery over " + maxRecoverySeconds + " s: " + line());
        assertTrue(maxDuplicates() <= maxDuplicatesPerConsumer,
                "duplicates over " + maxDuplicatesPerConsumer + ": " + line());
    }
}
