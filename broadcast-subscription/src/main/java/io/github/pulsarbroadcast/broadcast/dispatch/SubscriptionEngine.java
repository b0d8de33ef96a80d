package io.github.pulsarbroadcast.broadcast.dispatch;

import io.github.pulsarbroadcast.broadcast.BroadcastConfig;
import io.github.pulsarbroadcast.broadcast.WindowBudget;
import io.github.pulsarbroadcast.broadcast.cursor.AckResult;
import io.github.pulsarbroadcast.broadcast.cursor.CursorRules;
import io.github.pulsarbroadcast.broadcast.cursor.VirtualCursor;
import io.github.pulsarbroadcast.broadcast.positions.SavedPosition;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.broker.service.BrokerServiceException;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The dispatch core of one broadcast subscription, free of stock broker objects: who is attached (joins:
 * {@link ConsumerJoins}), every retained position ({@link RetainedCursors}), the fan-out ({@link FanOut}),
 * acknowledgements, the periodic sync that moves the durable mark-delete position ({@link PeriodicSync}) and the saves
 * of every consumer's position ({@link PositionSync}). {@link BroadcastDispatcher} adapts it to the stock
 * {@code Dispatcher} interface; the model tests drive it directly with an in-memory storage, fake connections and a
 * task queue.
 *
 * <p>Threading: {@link #join}, {@link #leave}, {@link #acknowledge} and the reset methods run on any thread (stock
 * subscribe, close and admin threads; random executor threads for acks); {@link #flow} and {@link #redeliver} run on
 * any thread and only fill the consumer's {@link ConsumerInbox}, queueing at most one task per consumer; everything
 * else is posted to the {@link DispatchLoop}, which runs it in order. {@link #closed} is volatile, {@link #resets}
 * and {@link #recovery} thread-safe (any writer); {@link #periodicSync} runs on the dispatch thread.
 */
final class SubscriptionEngine {

    private static final Logger log = LoggerFactory.getLogger(SubscriptionEngine.class);

    private final String name;
    private final String topicName;
    private final int partitionIndex;
    private final SubscriptionStorage storage;
    private final BroadcastConfig config;
    private final CursorRules rules;
    private final DispatchLoop loop;
    private final LongSupplier nanoClock;
    private final RetainedCursors cursors = new RetainedCursors();
    private final DispatchCounters counters = new DispatchCounters();
    private final FanOut fanOut;
    private final PositionSync positions;
    private final PeriodicSync periodicSync;
    /** {@link #sync} as a task that names itself in the executor's slow-task warnings. */
    final Runnable syncTask;

    /** Where joins of names this subscription does not know start after a load, reset or reopen. */
    private final RecoveryWindow recovery;
    private volatile boolean closed;
    /** The positions captured by {@link #close}, for {@link #reopen}; volatile (stock threads). */
    private volatile List<SavedPosition> positionsAtClose;
    /** Reset-cursor operations under way: while any runs, no joins and no mark-delete. */
    private final ResetGate resets = new ResetGate();
    private final ConsumerJoins joins;

    SubscriptionEngine(String topicName, String subscriptionName, int partitionIndex, SubscriptionStorage storage,
                       BroadcastConfig config, WindowBudget windowBudget, DispatchLoop loop, LongSupplier nanoClock,
                       SubscriptionStart start) {
        this.name = "[" + topicName + "][" + subscriptionName + "]";
        this.syncTask = DispatchLoop.named(name + " periodic sync", this::sync);
        this.topicName = topicName;
        this.partitionIndex = partitionIndex;
        this.storage = storage;
        this.config = config;
        this.rules = new CursorRules(storage::next, config.maxAckRangesPerConsumer());
        this.loop = loop;
        this.nanoClock = nanoClock;
        this.fanOut = new FanOut(this, storage, config, windowBudget, name);
        this.recovery = new RecoveryWindow(storage, nanoClock,
                TimeUnit.SECONDS.toNanos(config.reconnectGraceSeconds()));
        this.positions = new PositionSync(start.store, config.positionSyncIntervalMs(), name, loop, nanoClock,
                recovery::joinFloor);
        this.periodicSync = new PeriodicSync(name, storage, config, cursors, fanOut, positions, recovery, resets,
                counters, nanoClock, () -> closed, rules.withheld());
        this.joins = new ConsumerJoins(name, cursors, rules, storage, recovery, positions, resets, () -> closed);
        if (start.restored != null) {
            int expired = restore(start.restored);
            counters.retainedExpired.add(expired);
            log.info("{} Restored {} saved consumer positions ({} had expired)", name, start.restored.size() - expired,
                    expired);
        }
        if (start.recovering && start.windowNanos >= 0) {
            recovery.open(start.joinFloor, start.windowNanos); // what is left of the previous owner's window
        } else if (start.recovering) {
            recovery.open(start.joinFloor);
        }
    }

    /**
     * Restores saved or captured positions, each kept at least the grace from now, whatever the retention (their
     * consumers are on their way back), and no lower than the mark-delete position; returns how many had expired.
     */
    private int restore(List<SavedPosition> saved) {
        long grace = TimeUnit.SECONDS.toNanos(config.reconnectGraceSeconds());
        return cursors.restore(saved, nanoClock.getAsLong(), loop.wallMillis(), Math.max(retentionNanos(), grace),
                grace, storage.markDeleted(), rules);
    }

    private long retentionNanos() {
        return TimeUnit.SECONDS.toNanos(config.consumerRetentionSeconds());
    }

    // ----- plumbing for FanOut -----

    void post(Runnable task) {
        loop.post(task);
    }

    void schedule(Runnable task, long delayMs) {
        loop.schedule(task, delayMs);
    }

    int attachedCount() {
        return cursors.attachedCount();
    }

    List<BroadcastConsumer> attachedConsumers() {
        return cursors.attachedConsumers();
    }

    String topicName() {
        return topicName;
    }

    int partitionIndex() {
        return partitionIndex;
    }

    DispatchCounters counters() {
        return counters;
    }

    String name() {
        return name;
    }

    EntryOffsets entryOffsets() {
        return storage.entryOffsets();
    }

    /**
     * What the metrics show; any thread. The pass over every consumer comes from the last periodic sync when it is
     * recent (three sync intervals, at least 3 s); otherwise this call makes it, over {@code connected} and every
     * position.
     */
    SubscriptionSnapshot snapshot(Collection<BroadcastConsumer> connected) {
        long now = nanoClock.getAsLong();
        long maxAge = TimeUnit.MILLISECONDS.toNanos(Math.max(3_000, 3 * config.markDeleteIntervalMs()));
        ConsumerSummaries.Summary summary = periodicSync.summaries.latest(now, maxAge);
        if (summary == null) {
            summary = ConsumerSummaries.Summary.direct(connected, cursors.lags(storage.entryOffsets()), now);
        }
        return new SubscriptionSnapshot(summary, cursors.retainedCount(), fanOut.window.size(), fanOut.window.bytes(),
                counters);
    }

    // ----- joining and leaving (any thread) -----

    /** Attaches a consumer ({@link ConsumerJoins#attach}) and tells the fan-out. */
    BroadcastConsumer join(long consumerId, String consumerName, ConsumerConnection cnx,
                           InitialPosition initialPosition, long epoch) throws BrokerServiceException {
        BroadcastConsumer bc = joins.attach(this, consumerId, consumerName, cnx, initialPosition, epoch);
        if (bc.resumed) {
            counters.resumedByName.increment();
        }
        positions.changed();
        post(() -> fanOut.join(bc));
        if (log.isDebugEnabled()) {
            log.debug("{} Consumer {} joined ({}) at {}, epoch {}", name, consumerName, bc.resumed ? "resumed"
                    : recovery.isOpen() ? "recovery window" : initialPosition, bc.cursor.acknowledged(), epoch);
        }
        return bc;
    }

    /** How many subscribes wait for the consumer name {@code name}, held by a connected consumer. */
    int subscribesWaitingFor(String name) {
        return cursors.waitingFor(name);
    }

    /** Where the release of a consumer name held by a connected consumer is announced ({@link NameHandover}). */
    NameHandover.Releases nameReleases() {
        return cursors;
    }

    /** Detaches a consumer; its position is retained for a reconnect unless the subscription closes or resets. */
    void leave(BroadcastConsumer bc) {
        boolean retain = !closed && config.consumerRetentionSeconds() > 0;
        cursors.detach(bc, retain, nanoClock.getAsLong() + retentionNanos());
        positions.changed();
        post(() -> fanOut.remove(bc));
    }

    /**
     * Called after stock code saw the subscription without consumers: it then takes the managed cursor off the
     * ledger's list of cursors waiting for entries, so a tail read armed before must be armed again, or nothing
     * would wake it when a consumer that joined meanwhile waits at the tail.
     */
    void waitingCursorDropped() {
        post(fanOut::rearmTailRead);
    }

    // ----- flow, redelivery, acknowledgements -----

    /** Adds flow permits; any thread. At most one task per consumer is queued for flows and redeliveries. */
    void flow(BroadcastConsumer bc, int permits) {
        if (permits > 0 && bc.inbox.offerPermits(permits)) {
            post(bc.inboxTask);
        }
    }

    /** Rewinds {@code bc} to its acknowledged position (a client's redeliver command); any thread. */
    void redeliver(BroadcastConsumer bc, long epoch) {
        counters.redeliveries.increment();
        if (bc.inbox.offerRedelivery(epoch)) {
            post(bc.inboxTask);
        }
    }

    /** Applies what {@code bc}'s inbox holds, in its order; dispatch thread. */
    void applyInbox(BroadcastConsumer bc) {
        fanOut.applyInbox(bc);
    }

    /** See {@link VirtualCursor#acknowledgeLost}; dispatch thread. */
    void acknowledgeLost(BroadcastConsumer bc, PositionImpl first, PositionImpl last) {
        bc.cursor.acknowledgeLost(first, last);
        positions.changed();
        fanOut.end.tellIfDone(bc);
    }

    /**
     * {@code bc} reached an entry for no consumer ({@link WindowEntry#withheld}): it counts as acknowledged by it
     * ({@link VirtualCursor#passWithheld}); dispatch thread.
     */
    void passWithheld(BroadcastConsumer bc, PositionImpl position) {
        rules.withheld().add(position); // again if it was dropped: a consumer back from away reaches it again
        if (bc.cursor.passWithheld(position)) {
            positions.changed();
            fanOut.end.tellIfDone(bc);
        }
    }

    /**
     * Applies one acknowledgement of {@code bc}; any thread. A cumulative one with entry id -1 acknowledges everything
     * before the ledger's first entry: the entry before it, which may be the last of an earlier ledger (a cumulative
     * ack inside the first entry of a ledger, {@code AckCopy}).
     */
    AckResult acknowledge(BroadcastConsumer bc, long ledgerId, long entryId, boolean cumulative) {
        PositionImpl position = entryId < 0 && cumulative ? storage.previous(PositionImpl.get(ledgerId, 0))
                : PositionImpl.get(ledgerId, entryId);
        bc.lastAckedMillis = System.currentTimeMillis();
        counters.acks.increment();
        AckResult result = cumulative ? bc.cursor.acknowledgeCumulative(position)
                : bc.cursor.acknowledgeIndividual(position);
        if (result == AckResult.ADVANCED || result == AckResult.RECORDED) {
            positions.changed();
            if (result == AckResult.ADVANCED) {
                fanOut.end.tellIfDone(bc); // a volatile read unless the topic was terminated
            }
        } else if (result == AckResult.NOT_SENT) {
            counters.rejectedAcks.increment();
            if (log.isDebugEnabled()) {
                log.debug("{} Rejected ack of {} from {}: never sent to it", name, position, bc);
            }
        } else if (result == AckResult.DROPPED) {
            counters.droppedAcks.increment();
            if (log.isDebugEnabled()) {
                log.debug("{} Ack of {} from {} not recorded: {} ack ranges held", name, position, bc,
                        rules.maxAckRanges());
            }
        }
        return result;
    }

    // ----- the periodic sync (dispatch thread) -----

    /** One periodic sync ({@link PeriodicSync}); dispatch thread. */
    void sync() {
        periodicSync.run();
    }

    /** See {@link PeriodicSync#runBeforeSkip}; dispatch thread. */
    void syncBeforeSkip() {
        periodicSync.runBeforeSkip();
    }

    // ----- reset, close -----

    /** An operator's reset-cursor starts: refuse joins, freeze the mark-delete. */
    void beginReset() {
        resets.begin();
    }

    /**
     * The managed cursor was reset: every position (those of the consumers the reset disconnected included) starts
     * again from the new mark-delete position, and for the recovery window joins of new names start there too.
     * Returns the save of those positions, which the reset's answer waits for ({@link #finishReset}): failed when
     * the subscription closed meanwhile (a topic unload saved the positions from before the reset, and the next owner
     * resumes those), when restarting them threw (stock's reset would otherwise never answer: a review), when the
     * save fails, and when no save can land here any more (the topic left this broker, or the subscription is being
     * deleted: {@link PositionSync#saveNow}). Until a save captured after it works, new names are refused
     * ({@link PositionSync#positionsRestarted}).
     */
    CompletableFuture<Void> cursorReset() {
        CompletableFuture<Void> saved;
        try {
            if (closed) {
                throw new IllegalStateException("the subscription closed during the reset, with the positions from"
                        + " before it");
            }
            long now = nanoClock.getAsLong();
            cursors.restartAll(storage.markDeleted(), rules, now, now + retentionNanos());
            // The window first, so that the save's join floor is the reset position. Saved at once: a crash before
            // the next periodic save must not bring back positions from before the reset.
            recovery.openAfterReset(retentionNanos() < TimeUnit.SECONDS.toNanos(config.reconnectGraceSeconds()));
            positions.positionsRestarted(); // new names refused until a save captured from here on works
            positions.changed();
            saved = positions.saveNow(cursors, now, false);
            post(fanOut::cursorWasReset);
        } catch (RuntimeException e) {
            saved = CompletableFuture.failedFuture(e);
        }
        resets.saving(saved);
        return saved;
    }

    /** See {@link ResetGate#finish}: the reset ends when {@code stockReset} and the save of its positions are done. */
    CompletableFuture<Void> finishReset(CompletableFuture<Void> stockReset) {
        return resets.finish(stockReset, name);
    }

    /**
     * Closes the subscription on this broker: saves every position as it is (connected consumers included, so they
     * resume where they are on the next owner), then stops retaining. The future completes when the save is done.
     */
    CompletableFuture<Void> close() {
        if (closed) {
            return CompletableFuture.completedFuture(null);
        }
        long now = nanoClock.getAsLong();
        closed = true; // first: a capture that throws must not leave it half-closed (a review)
        try {
            // Kept for reopen(): a close or delete that fails half-way resumes the subscription on this broker.
            positionsAtClose = cursors.save(now, loop.wallMillis(), Integer.MAX_VALUE, null); // in memory: all ranges
            return positions.saveNow(cursors, now, true);
        } finally {
            cursors.dropRetained();
        }
    }

    /** The topic left this broker without closing the subscription: no more saves, for good. */
    void abandonPositions() {
        positions.abandon();
    }

    /** The subscription is being deleted: stop saving (true), or it was not after all (false). */
    void deleting(boolean deleting) {
        positions.stop(deleting);
    }

    /** Removes the saved positions (after the subscription was deleted). */
    CompletableFuture<Void> deleteSavedPositions() {
        positions.stop(true);
        return positions.store().delete();
    }

    /** Closes the fan-out once every consumer has left (dispatch thread). */
    void closeFanOut() {
        post(fanOut::close);
    }

    /**
     * The subscription resumes after a close that failed half-way: the positions it had at the close come back
     * (retained; connected consumers reconnect by name), with the recovery window for anything since, and are saved
     * at once.
     */
    void reopen() {
        List<SavedPosition> atClose = positionsAtClose;
        positionsAtClose = null;
        if (atClose != null) {
            restore(atClose);
            recovery.open(null);
        }
        positions.reopen();
        // Saved at once, not on close: until then the store says the positions were saved on close, and after a
        // crash the next owner would open no recovery window for consumers that joined since (regression, thirtieth
        // session, found by the dispatch model test once closes could fail half-way).
        positions.saveNow(cursors, nanoClock.getAsLong(), false);
        closed = false;
        post(fanOut::reopen);
    }

    boolean isClosed() {
        return closed;
    }

    int retainedCount() {
        return cursors.retainedCount();
    }

    @Override
    public String toString() {
        return name + " " + fanOut + ", attached " + cursors.attachedCount() + ", retained "
                + cursors.retainedCount();
    }
}
