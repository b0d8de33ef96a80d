package io.github.pulsarbroadcast.broadcast.dispatch;

import io.github.pulsarbroadcast.broadcast.BroadcastConfig;
import io.github.pulsarbroadcast.broadcast.positions.PositionStore;
import io.github.pulsarbroadcast.broadcast.positions.PositionStore.Loaded;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import org.apache.pulsar.broker.service.BrokerServiceException.ServiceUnitNotReadyException;
import org.apache.pulsar.broker.service.BrokerServiceException.TopicFencedException;
import org.apache.pulsar.common.util.FutureUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a broadcast subscription whose managed cursor exists starts on this broker, from what its {@link PositionStore}
 * holds: with its saved positions; in the recovery window when they are unreadable or come from a crash (duplicates,
 * never loss); for what is left of a window a graceful move carried over; refused (retryable) when reading them
 * failed. The installer and the dispatch model both
 * start a subscription through {@link #resume}, so the model checks the installer's own decision.
 *
 * <p>Threading: stateless; {@link #resume} completes on whatever thread completes the store's futures.
 */
final class StartDecision {

    private static final Logger log = LoggerFactory.getLogger(StartDecision.class);

    /** Beyond two save intervals, how much older a snapshot may be before it counts as stale. */
    static final long STALE_MARGIN_MS = 10_000;

    private StartDecision() {
    }

    /**
     * Loads the saved positions and decides the start, at {@code wallClock}'s time when the load completes.
     *
     * <p>A load that failed (the metadata store did not answer, a read timed out, or the take-over of the head lost a
     * race with the previous owner's late save) refuses the installation as not ready, with what the store holds left
     * as it is: the client retries, and the next installation loads again. Before, the subscription started without
     * positions in the recovery window and the store's snapshot was replaced by an empty one (so that a crash here
     * did not bring the previous owner's back): a consumer away for longer than the window lost its backlog for good
     * (regression, forty-second session's review). A topic no longer served here refuses as closing.
     */
    static CompletableFuture<SubscriptionStart> resume(PositionStore store, BroadcastConfig config,
                                                       LongSupplier wallClock, BooleanSupplier stillServed,
                                                       String logName) {
        if (config.positionSyncIntervalMs() == 0) {
            return CompletableFuture.completedFuture(new SubscriptionStart(store, null, true));
        }
        return store.load().handle((loaded, e) -> {
            if (e != null) {
                throw refused(stillServed, logName, e, "its saved consumer positions could not be read");
            }
            return decide(store, loaded, wallClock.getAsLong(), config, logName);
        });
    }

    /**
     * How a subscription created anew on this broker starts: with nothing saved, once what an earlier subscription
     * of its name left is dropped; refused as not ready when dropping it fails. Regression (a review, forty-fifth
     * session): it started anyway, its first save took the earlier subscription's head over, and the head's creation
     * time, older than the new cursor's, made the next owner discard this subscription's own positions as an earlier
     * one's. The retry finds the cursor and loads, which drops them ({@link PositionStore#load}).
     */
    static CompletableFuture<SubscriptionStart> fresh(PositionStore store, BroadcastConfig config,
                                                      BooleanSupplier stillServed, String logName) {
        if (config.positionSyncIntervalMs() == 0) {
            return CompletableFuture.completedFuture(new SubscriptionStart(store, null, false));
        }
        return store.discard().handle((v, e) -> {
            if (e != null) {
                throw refused(stillServed, logName, e,
                        "the saved consumer positions of an earlier subscription of its name could not be cleared");
            }
            return new SubscriptionStart(store, null, false);
        });
    }

    /** The refusal of an installation whose call to the store failed ({@link #resume}, {@link #fresh}). */
    private static CompletionException refused(BooleanSupplier stillServed, String logName, Throwable failure,
                                               String what) {
        if (!stillServed.getAsBoolean()) {
            return new CompletionException(new TopicFencedException("Topic is closing"));
        }
        Throwable cause = FutureUtil.unwrapCompletionException(failure);
        log.warn("{} {} ({}): the subscribe is refused as not ready; its retry reads the saved positions again",
                logName, what, cause.toString());
        return new CompletionException(new ServiceUnitNotReadyException("Broadcast subscription " + logName
                + ": " + what + " (" + cause + "); retry"));
    }

    /** The start from what a load read. */
    static SubscriptionStart decide(PositionStore store, Loaded loaded, long nowMillis, BroadcastConfig config,
                                    String logName) {
        long age = nowMillis - loaded.savedAtMillis;
        // A snapshot older than two intervals may miss consumers that joined since (saving failed, was fenced or
        // switched off for a while): restore it, and open the recovery window as well.
        boolean stale = age > 2 * config.positionSyncIntervalMs() + STALE_MARGIN_MS;
        long graceNanos = TimeUnit.SECONDS.toNanos(config.reconnectGraceSeconds());
        long windowLeft = loaded.found() && loaded.savedOnClose && !stale
                ? SubscriptionStart.windowLeftNanos(loaded.joinFloor, nowMillis, graceNanos) : -1;
        if (windowLeft >= 0) {
            // Saved on close inside a recovery window: the window goes on here until its end, not for a whole
            // grace again (moves in a row would hold the mark-delete position still for as long as they go on).
            log.info("{} Saved consumer positions come from a close inside a recovery window: restored, {}",
                    logName, windowLeft > 0 ? "with the window for the " + windowLeft / 1_000_000
                            + " ms left of it" : "the window has ended since");
            return new SubscriptionStart(store, loaded.positions, windowLeft > 0, loaded.joinFloor, windowLeft);
        }
        if (loaded.found() && !loaded.positions.isEmpty()) {
            return restored(store, loaded, stale, age, config, logName);
        }
        String why = loaded.problem != null ? "they are unreadable: " + loaded.problem : "none were saved";
        log.warn("{} No saved consumer positions ({}): consumers that were attached resume at the mark-delete"
                + " position during the next {} s (duplicates, not loss)", logName, why,
                config.reconnectGraceSeconds());
        boolean read = loaded.found();
        return new SubscriptionStart(store, read ? loaded.positions : null, true, read ? loaded.joinFloor : null);
    }

    private static SubscriptionStart restored(PositionStore store, Loaded loaded, boolean stale, long age,
                                              BroadcastConfig config, String logName) {
        if (!loaded.savedOnClose) {
            // The owner crashed: consumers that joined after the last save are not in it. They must find their
            // messages when they come back, so every name not in the snapshot starts at the save's join floor (where
            // such a consumer may have started; the mark-delete position when the save has none) during the recovery
            // window (duplicates, not loss).
            log.info("{} Saved consumer positions come from a periodic save ({} s old), not from a close: restored,"
                    + " with the recovery window of {} s for names not in them (starting at {})", logName, age / 1000,
                    config.reconnectGraceSeconds(), loaded.joinFloor != null
                            ? "the save's join floor " + loaded.joinFloor : "the mark-delete position");
            return new SubscriptionStart(store, loaded.positions, true, loaded.joinFloor);
        }
        if (stale) {
            log.warn("{} Saved consumer positions are {} s old: restored, with the recovery window of {} s for"
                    + " consumers that joined since (duplicates, not loss)", logName, age / 1000,
                    config.reconnectGraceSeconds());
        }
        return new SubscriptionStart(store, loaded.positions, stale, loaded.joinFloor);
    }
}
