package io.github.pulsarbroadcast.broadcast.dispatch;

import io.github.pulsarbroadcast.broadcast.BroadcastConfig;
import io.github.pulsarbroadcast.broadcast.positions.PositionStore;
import io.github.pulsarbroadcast.broadcast.positions.PositionStore.Loaded;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import org.apache.pulsar.broker.service.BrokerServiceException.ServiceUnitNotReadyException;
import org.apache.pulsar.broker.service.BrokerServiceException.TopicFencedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a broadcast subscription whose managed cursor exists starts on this broker, from what its {@link PositionStore}
 * holds: with its saved positions; in the recovery window when they are unreadable or come from a crash, or their
 * read failed and they could be replaced (duplicates, never loss; refused when they could not); for what is left of a
 * window a graceful move carried over. The installer and the dispatch model both
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
     * <p>After a load that failed, the subscription starts with no positions and its recovery window at the
     * mark-delete position, and before it starts, what the store holds is replaced by exactly that (no positions, no
     * join floor, not saved on close). Otherwise, until this broker's first save, the store would still hold the
     * previous owner's snapshot: its "saved on close" mark (after a crash of this broker the next owner would open no
     * recovery window) and its join floor, above the mark-delete position where this broker's window starts
     * consumers it does not know (the next owner would start such a consumer at that floor, past what it was sent).
     * Found by the dispatch model test once loads could fail (regression, thirtieth session). The replacement is made
     * only while {@code stillServed} says the topic is served here, and the store makes it only while this broker
     * owns the topic ({@link PositionStore#isFenced} otherwise); when it is not made, or fails (the metadata store
     * that failed the load may still be failing), the installation is refused as not ready: a subscription that
     * started anyway would leave the previous owner's snapshot in place (a review, thirtieth
     * session).
     */
    static CompletableFuture<SubscriptionStart> resume(PositionStore store, BroadcastConfig config,
                                                       LongSupplier wallClock, BooleanSupplier stillServed,
                                                       String logName) {
        if (config.positionSyncIntervalMs() == 0) {
            return CompletableFuture.completedFuture(new SubscriptionStart(store, null, true));
        }
        return store.load().handle((loaded, e) -> {
            if (e == null) {
                return CompletableFuture.completedFuture(decide(store, loaded, null, wallClock.getAsLong(), config,
                        logName));
            }
            return replaceAfterFailedLoad(store, stillServed, logName, e)
                    .thenApply(v -> decide(store, null, e, wallClock.getAsLong(), config, logName));
        }).thenCompose(start -> start);
    }

    /** The replacement of what the store holds after a failed load ({@link #resume}); fails when it is not made. */
    private static CompletableFuture<Void> replaceAfterFailedLoad(PositionStore store, BooleanSupplier stillServed,
                                                                  String logName, Throwable loadFailure) {
        if (!stillServed.getAsBoolean()) {
            return CompletableFuture.failedFuture(new TopicFencedException("Topic is closing"));
        }
        return store.save(List.of(), null, false).handle((v, saveFailed) -> {
            if (saveFailed == null && !store.isFenced()) {
                return null;
            }
            if (saveFailed == null) {
                throw new CompletionException(new TopicFencedException("Topic is closing"));
            }
            log.warn("{} Could neither read the saved consumer positions ({}) nor replace them ({}): the subscribe"
                    + " is refused as not ready", logName, loadFailure.toString(),
                    saveFailed.toString());
            throw new CompletionException(new ServiceUnitNotReadyException("Broadcast subscription " + logName
                    + ": its saved consumer positions could not be read or replaced (" + saveFailed + "); retry"));
        });
    }

    /** The start from a load's outcome: {@code loaded}, or its failure {@code e}. */
    static SubscriptionStart decide(PositionStore store, Loaded loaded, Throwable e, long nowMillis,
                                    BroadcastConfig config, String logName) {
        long age = e == null ? nowMillis - loaded.savedAtMillis : 0;
        // A snapshot older than two intervals may miss consumers that joined since (saving failed, was fenced or
        // switched off for a while): restore it, and open the recovery window as well.
        boolean stale = age > 2 * config.positionSyncIntervalMs() + STALE_MARGIN_MS;
        long graceNanos = TimeUnit.SECONDS.toNanos(config.reconnectGraceSeconds());
        long windowLeft = e == null && loaded.found() && loaded.savedOnClose && !stale
                ? SubscriptionStart.windowLeftNanos(loaded.joinFloor, nowMillis, graceNanos) : -1;
        if (windowLeft >= 0) {
            // Saved on close inside a recovery window: the window goes on here until its end, not for a whole
            // grace again (moves in a row would hold the mark-delete position still for as long as they go on).
            log.info("{} Saved consumer positions come from a close inside a recovery window: restored, {}",
                    logName, windowLeft > 0 ? "with the window for the " + windowLeft / 1_000_000
                            + " ms left of it" : "the window has ended since");
            return new SubscriptionStart(store, loaded.positions, windowLeft > 0, loaded.joinFloor, windowLeft);
        }
        if (e == null && loaded.found() && !loaded.positions.isEmpty()) {
            return restored(store, loaded, stale, age, config, logName);
        }
        String why = e != null ? "reading them failed: " + e : loaded.problem != null
                ? "they are unreadable: " + loaded.problem : "none were saved";
        log.warn("{} No saved consumer positions ({}): consumers that were attached resume at the mark-delete"
                + " position during the next {} s (duplicates, not loss)", logName, why,
                config.reconnectGraceSeconds());
        boolean read = e == null && loaded.found();
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
