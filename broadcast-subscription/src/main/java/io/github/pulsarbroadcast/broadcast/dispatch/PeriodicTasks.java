package io.github.pulsarbroadcast.broadcast.dispatch;

import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The two scheduler tasks of one broadcast subscription: the periodic sync's tick (at a fixed rate) and the stats
 * publication (with a fixed delay). Started when the subscription is created and again when it reopens, stopped when
 * it closes; starting a task that runs is a no-op.
 *
 * <p>Threading: any thread; the task handles are guarded by {@code this}.
 */
final class PeriodicTasks {

    private final ScheduledExecutorService scheduler;
    private final Runnable tick;
    private final long tickMs;
    private final Runnable stats;
    private final long statsMs;
    private ScheduledFuture<?> tickTask;
    private ScheduledFuture<?> statsTask;

    PeriodicTasks(ScheduledExecutorService scheduler, Runnable tick, long tickMs, Runnable stats, long statsMs) {
        this.scheduler = scheduler;
        this.tick = tick;
        this.tickMs = tickMs;
        this.stats = stats;
        this.statsMs = statsMs;
    }

    synchronized void start() {
        if (tickTask == null || tickTask.isCancelled()) {
            tickTask = scheduler.scheduleAtFixedRate(tick, tickMs, tickMs, TimeUnit.MILLISECONDS);
        }
        if (statsTask == null || statsTask.isCancelled()) {
            statsTask = scheduler.scheduleWithFixedDelay(stats, statsMs, statsMs, TimeUnit.MILLISECONDS);
        }
    }

    synchronized void stop() {
        for (ScheduledFuture<?> task : new ScheduledFuture<?>[] {tickTask, statsTask}) {
            if (task != null) {
                task.cancel(false);
            }
        }
    }
}
