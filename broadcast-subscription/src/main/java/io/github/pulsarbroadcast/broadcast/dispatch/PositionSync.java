package io.github.pulsarbroadcast.broadcast.dispatch;

import io.github.pulsarbroadcast.broadcast.positions.PositionStore;
import io.github.pulsarbroadcast.broadcast.positions.SavedPosition;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Saves a subscription's consumer positions ({@link RetainedCursors#save}) to its {@link PositionStore}: from the
 * periodic sync at most once per {@code broadcastPositionSyncIntervalMs} and only when something changed (an ack
 * moved a position, a consumer joined, left or expired, a position was moved forward), never per join or per ack;
 * and once more when the subscription closes (a topic move or broker shut-down), so a graceful move loses nothing of
 * what was acknowledged. One save is in flight at a time; a failed one is retried at the next interval.
 *
 * <p>Threading: {@link #changed} is volatile (set by ack threads and the dispatch thread); {@link #maybeSave} and
 * the fields it uses ({@link #lastSaveNanos}, {@link #saving}, {@link #failuresLogged}) are confined to the dispatch
 * thread; {@link #saveNow} and {@link #stop} run on any thread (the store serialises writes).
 */
final class PositionSync {

    private static final Logger log = LoggerFactory.getLogger(PositionSync.class);

    private final PositionStore store;
    private final long intervalNanos;
    private final String name;
    private final DispatchLoop loop;
    private volatile boolean changed;
    private volatile boolean stopped;
    private long lastSaveNanos;
    private boolean saving;
    private int failuresLogged;

    PositionSync(PositionStore store, long intervalMs, String name, DispatchLoop loop) {
        this.loop = loop;
        this.store = store;
        this.intervalNanos = intervalMs * 1_000_000;
        this.name = name;
    }

    /** Whether positions are saved at all ({@code broadcastPositionSyncIntervalMs} greater than 0). */
    boolean enabled() {
        return intervalNanos > 0;
    }

    /** Something a save would record changed; any thread. */
    void changed() {
        if (!changed) {
            changed = true;
        }
    }

    /** Saves if something changed and the interval has passed since the last save (dispatch thread). */
    void maybeSave(RetainedCursors cursors, long nowNanos) {
        if (!changed || saving || stopped || !enabled() || nowNanos - lastSaveNanos < intervalNanos
                || store.isFenced()) {
            return;
        }
        changed = false;
        saving = true;
        lastSaveNanos = nowNanos;
        List<SavedPosition> positions = cursors.save(nowNanos, loop.wallMillis());
        store.save(positions).whenComplete((v, e) -> loop.post(() -> saved(e)));
    }

    private void saved(Throwable e) {
        saving = false;
        if (e == null) {
            failuresLogged = 0;
            return;
        }
        changed = true;
        if (failuresLogged++ == 0 || log.isDebugEnabled()) {
            log.warn("{} Saving consumer positions failed (retried every interval; logged again when it has"
                    + " worked once): {}", name, e.toString());
        }
    }

    /** Saves the positions as they are now, whatever the interval (the subscription closes); any thread. */
    CompletableFuture<Void> saveNow(RetainedCursors cursors, long nowNanos) {
        if (stopped || !enabled() || store.isFenced()) {
            return CompletableFuture.completedFuture(null);
        }
        return store.save(cursors.save(nowNanos, loop.wallMillis()));
    }

    /** No more saves: the subscription is being deleted (its positions are removed after it is). */
    void stop(boolean stop) {
        stopped = stop;
    }

    PositionStore store() {
        return store;
    }
}
