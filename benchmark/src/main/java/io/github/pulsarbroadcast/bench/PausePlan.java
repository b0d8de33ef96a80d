package io.github.pulsarbroadcast.bench;

import io.github.pulsarbroadcast.bench.core.ConsumerTracker;
import io.github.pulsarbroadcast.bench.core.LatencyRecorder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The backlog experiment of one run: which consumers pause ({@code pauseFraction} of them, spread evenly over the
 * clients), when ({@code pauseAfterSeconds} into the measured period) and for how long. At the resume each paused
 * consumer must catch up with every message published so far; the other consumers' latency is recorded per window
 * meanwhile.
 *
 * <p>Threading: the main thread calls {@link #tick} from its polling loop; pause and resume happen there.
 */
final class PausePlan {

    private final List<Integer> paused;
    private final long pauseAtNanos;
    private final long resumeAtNanos;
    private int state;

    private PausePlan(List<Integer> paused, long pauseAtNanos, long resumeAtNanos) {
        this.paused = paused;
        this.pauseAtNanos = pauseAtNanos;
        this.resumeAtNanos = resumeAtNanos;
    }

    /** The plan for a run whose publisher starts at {@code startNanos}, or null when nothing pauses. */
    static PausePlan create(BenchSettings s, ConsumerTracker[] trackers, long startNanos) {
        List<Integer> paused = new ArrayList<>();
        for (ConsumerTracker t : trackers) {
            if (t.pauseGroup()) {
                paused.add(t.index());
            }
        }
        if (paused.isEmpty()) {
            return null;
        }
        long pauseAt = startNanos + TimeUnit.SECONDS.toNanos(s.warmupSeconds + s.pauseAfterSeconds);
        return new PausePlan(paused, pauseAt, pauseAt + TimeUnit.SECONDS.toNanos(s.pauseSeconds));
    }

    int size() {
        return paused.size();
    }

    /** Pauses or resumes when due. */
    void tick(long nowNanos, ConsumerSide consumers, MessageSource source) {
        if (state == 0 && nowNanos >= pauseAtNanos) {
            consumers.window(LatencyRecorder.PAUSE);
            consumers.pause(paused);
            state = 1;
        } else if (state == 1 && nowNanos >= resumeAtNanos) {
            resume(consumers, source);
        }
    }

    /** Resumes now if paused (the drain calls it so that no consumer stays paused); true if it had to. */
    boolean resumeIfPaused(ConsumerSide consumers, MessageSource source) {
        if (state == 1) {
            resume(consumers, source);
            return true;
        }
        return false;
    }

    private void resume(ConsumerSide consumers, MessageSource source) {
        consumers.window(LatencyRecorder.CATCH_UP);
        consumers.resume(paused, source.lastSentSeq());
        state = 2;
    }

    /** True once the pause has started. */
    boolean started() {
        return state > 0;
    }
}
