package io.github.pulsarbroadcast.broadcast.dispatch;

import io.github.pulsarbroadcast.broadcast.BroadcastConfig;
import io.github.pulsarbroadcast.broadcast.cursor.WithheldPositions;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The periodic sync of one broadcast subscription ({@code broadcastMarkDeleteIntervalMs}): one scan over every
 * retained position ({@link RetainedCursors#scan}) that moves the durable mark-delete position up to the lowest
 * acknowledged one (connected or not), so storage keeps every message until every consumer has it; moves forward any
 * consumer that the managed cursor was moved past (backlog-quota eviction, TTL, clear-backlog, skip); drops expired
 * positions; trims the window; gathers what the metrics read of every consumer ({@link ConsumerSummaries}); finds the
 * end of a terminated topic ({@link FanOut#checkTerminated}); and saves the positions when due ({@link PositionSync}).
 * Split out of {@link SubscriptionEngine}, which owns it and every collaborator it is given.
 *
 * <p>Threading: {@link #run} is confined to the dispatch thread, and so are {@link #scan} and the engine's fan-out it
 * calls. {@link #summaries} is thread-safe ({@link ConsumerSummaries}: read by the metrics on any thread). The
 * collaborators state their own models; the scan's start ({@link #markDeletedForScan}) runs under the positions' lock.
 */
final class PeriodicSync {

    private static final Logger log = LoggerFactory.getLogger(PeriodicSync.class);

    private final String name;
    private final SubscriptionStorage storage;
    private final BroadcastConfig config;
    private final RetainedCursors cursors;
    private final FanOut fanOut;
    private final PositionSync positions;
    private final RecoveryWindow recovery;
    private final ResetGate resets;
    private final DispatchCounters counters;
    private final LongSupplier nanoClock;
    /** Whether the subscription is closed (the engine's volatile flag). */
    private final BooleanSupplier closed;
    /** Reused by every run; dispatch thread. */
    private final PositionScan scan = new PositionScan();
    /** The positions of entries no consumer is sent ({@link #dropWithheld}). */
    private final WithheldPositions withheld;
    /** What the metrics read of every consumer, gathered by {@link #run} while it scans. */
    final ConsumerSummaries summaries = new ConsumerSummaries();
    /** Asked under the positions' lock at the start of each scan. */
    private final PositionScan.Start scanStart = this::markDeletedForScan;

    PeriodicSync(String name, SubscriptionStorage storage, BroadcastConfig config, RetainedCursors cursors,
                 FanOut fanOut, PositionSync positions, RecoveryWindow recovery, ResetGate resets,
                 DispatchCounters counters, LongSupplier nanoClock, BooleanSupplier closed,
                 WithheldPositions withheld) {
        this.name = name;
        this.withheld = withheld;
        this.storage = storage;
        this.config = config;
        this.cursors = cursors;
        this.fanOut = fanOut;
        this.positions = positions;
        this.recovery = recovery;
        this.resets = resets;
        this.counters = counters;
        this.nanoClock = nanoClock;
        this.closed = closed;
    }

    /** One sync; dispatch thread. */
    void run() {
        run(false);
    }

    /**
     * A sync right before an operator's skip, which stock counts from the managed cursor's mark-delete position: that
     * position is moved up to the lowest acknowledged one of every consumer, connected or retained, even while a
     * recovery window that a reset-cursor opened holds it (not during a reset), so that the skip counts from where the
     * consumers are, as a stock subscription's skip counts from its consumer's position (regression, forty-first
     * session: {@code StockEquivalenceTest} seed 1661545972, a skip after a reset-cursor counted from the reset
     * position and skipped a message the consumer had already acknowledged instead of the next one). Not while a
     * window opened by a crash, an unreadable load or a reopen is open: a consumer whose name the subscription does
     * not know yet resumes at the mark-delete position, and moving it up would skip that consumer's messages below
     * the others' (regression, forty-second session's review). Dispatch thread.
     */
    void runBeforeSkip() {
        run(true);
    }

    private void run(boolean beforeSkip) {
        counters.dispatchThreadName = Thread.currentThread().getName();
        if (closed.getAsBoolean()) {
            return;
        }
        fanOut.checkTerminated();
        fanOut.placeFailedAgain();
        long now = nanoClock.getAsLong();
        boolean summarize = beginScan(now);
        long resetsBefore = resets.begunSoFar();
        // During the recovery window consumers attached before the move may still be on their way back, and they
        // resume at the mark-delete position: it must not move until then. Nor while a reset is under way.
        // Before a skip it moves in a window a reset opened (every position was restarted, so every consumer is known),
        // not in one where a name it does not know may have been attached: that consumer resumes at the mark-delete
        // position, which the skip must not pass (the skip then counts from there: it skips less, never more).
        // Decided before the scan and again after it: the mark-delete is issued after the positions' lock is left, and
        // a join in the window's last moments, after the scan, starts at the window's floor below it (a review,
        // forty-fifth session: decided only after the scan, the window could end between, and the next scan moved
        // that consumer past what it never got); and a window may open after the scan (a reset, caught by
        // resetsBefore as well, or a close and a reopen: a review of the fix).
        boolean mayMoveBefore = mayMove(beforeSkip);
        // Closed and reset are checked, and the mark-delete read, under the positions' lock (regression: checked
        // before it, a close's drop of the retained positions could fall between, and the mark-delete pass them).
        if (!cursors.scan(scanStart, now, scan)) {
            return;
        }
        PositionImpl markDeleted = scan.markDeleted;
        if (summarize) {
            summaries.publish(now);
        }
        countExpiredAndMoved();
        moveForward(markDeleted);
        PositionImpl lowest = scan.lowestAcknowledged;
        if (mayMoveBefore && mayMove(beforeSkip) && lowest != null && lowest.compareTo(markDeleted) > 0) {
            resets.markDeleteUnlessResetSince(resetsBefore, storage, lowest);
        }
        if (scan.lowestNext != null) {
            fanOut.trimWindow(scan.lowestNext);
        }
        dropWithheld();
        positions.maybeSave(cursors, nanoClock.getAsLong());
    }

    /** Whether the mark-delete may move now (see {@link #run}); dispatch thread. */
    private boolean mayMove(boolean beforeSkip) {
        return beforeSkip ? !recovery.mayHaveUnknownAttached() : !recovery.isOpen();
    }

    /**
     * Drops the positions of entries no consumer is sent that every connected consumer has acknowledged past. A
     * retained position below them (a consumer away) does not keep them: when it comes back it is sent everything
     * after its acknowledged position again and so reaches those entries again, which records them again. So the set
     * holds what lies between the slowest connected consumer and the tail, not what an absent one holds back.
     */
    private void dropWithheld() {
        withheld.dropUpTo(scan.lowestConnectedAcknowledged != null ? scan.lowestConnectedAcknowledged
                : PositionImpl.LATEST);
    }

    /** Prepares the scan; true when this one gathers the consumers' summaries for the metrics. */
    private boolean beginScan(long now) {
        boolean summarize = summaries.wanted(now);
        scan.summaries = summarize ? summaries : null;
        scan.lagOf = summarize ? storage.entryOffsets()::lag : null;
        if (summarize) {
            summaries.begin();
        }
        return summarize;
    }

    private void countExpiredAndMoved() {
        if (scan.expired > 0) {
            counters.retainedExpired.add(scan.expired);
            log.info("{} Dropped {} retained consumer positions: their consumers did not reconnect within {} s",
                    name, scan.expired, config.consumerRetentionSeconds());
            positions.changed();
        }
        if (scan.movedAny) {
            positions.changed();
        }
        // Retained positions moved by policy are counted as connected ones are (regression: they were not).
        counters.consumersSkippedForward += scan.movedRetained;
    }

    /** Moves the connected consumers the managed cursor was moved past to the entry after it. */
    private void moveForward(PositionImpl markDeleted) {
        if (scan.movedForward.isEmpty()) {
            return;
        }
        PositionImpl next = storage.next(markDeleted);
        for (BroadcastConsumer bc : scan.movedForward) {
            counters.consumersSkippedForward++;
            fanOut.skipForward(bc, next);
        }
        scan.movedForward.clear();
    }

    private PositionImpl markDeletedForScan() {
        return closed.getAsBoolean() || resets.underWay() ? null : storage.markDeleted();
    }
}
