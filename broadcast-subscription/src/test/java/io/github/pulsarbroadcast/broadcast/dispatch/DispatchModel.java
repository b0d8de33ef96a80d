package io.github.pulsarbroadcast.broadcast.dispatch;

import io.github.pulsarbroadcast.broadcast.BroadcastConfig;
import io.github.pulsarbroadcast.broadcast.WindowBudget;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.bookkeeper.mledger.impl.PositionImpl;

/**
 * One randomized schedule of the dispatch core against a reference model. The schedule mixes publishing (ledgers
 * roll over every few entries, sometimes leaving a gap of a removed empty ledger), dispatch tasks and storage answers
 * in random order, flows, consumption with individual, cumulative and missing acks, redelivery, consumers leaving
 * and rejoining under the same or a new name, the last consumer leaving while another joins, connections whose
 * event loop rejects sends, failed reads, operator skips (TTL, backlog eviction), reset-cursor and topic reloads:
 * graceful ones (the positions are saved on close) and crashes (the new owner has only the last periodic save), with
 * saved positions restored through the real codec, or with saving switched off (the recovery window); loads that fail
 * and graceful closes that fail half-way and reopen. Each new owner starts as the installer starts it
 * ({@link StartDecision}).
 *
 * <p>Checked after every step and at every delivery, against what clients were sent and acknowledged:
 * <ul>
 *   <li><b>no loss</b>: the durable mark-delete position never passes the acknowledged position of a consumer
 *       whose position is retained (connected, or left less than the grace period ago), except where an operator
 *       moved the subscription;</li>
 *   <li><b>order, no gap</b>: each connection of a consumer receives positions in increasing order (a redelivery
 *       starts a new run), and skips only what that consumer acknowledged or an operator deleted;</li>
 *   <li><b>flow control</b>: no consumer is sent more messages than it gave permits for;</li>
 *   <li><b>retention</b>: a consumer that rejoins within the retention period resumes its own position, also after
 *       a reload when its position was saved, and then at or below what it acknowledged (duplicates, never
 *       loss);</li>
 * </ul>
 * and at the end, after a drain without faults: <b>liveness</b> (every connected consumer received and acknowledged
 * every message after its start, and the mark-delete position reached the end) and <b>no leak</b> (every entry
 * buffer read from storage was released once everything closed).
 *
 * <p>This class holds what the schedule's parts share (the world, the ledger, the engine, the operators' floor, the
 * reset in progress, the trace), draws the schedule, plays the operators (skips, reset-cursor) and makes the checks;
 * {@link ModelConsumers} plays the clients and checks what they are sent, {@link ModelRecovery} moves the topic and
 * keeps the recovery window, {@link ModelDrain} drains and makes the final checks.
 *
 * <p>Threading: single-threaded; the dispatch core's tasks run when the schedule says so.
 */
final class DispatchModel {

    static final int GRACE_SECONDS = 60;

    /** How long a disconnected consumer's position is retained ({@code broadcastConsumerRetentionSeconds}). */
    final long retentionNanos;
    final long seed;
    final Random rnd;
    final ModelHarness world = new ModelHarness();
    final ModelLedger ledger;
    final BroadcastConfig config;
    /** Shared by the engines of this schedule (a reload makes a new one); sometimes small enough to refuse. */
    final WindowBudget budget;
    final ModelPositionStore positions = new ModelPositionStore(world::wallMillis);
    final ModelConsumers consumers;
    final ModelRecovery recovery;
    private final ModelDrain finish;
    /** The engine of the topic's current owner (a reload makes a new one). */
    SubscriptionEngine engine;
    /** Where an operator last moved the subscription (skip, reset-cursor): all up to it counts as acknowledged. */
    PositionImpl floor;
    boolean resetPending;
    /** The store's count of saves when the last reset's own save failed, or -1 (see {@link #resetUnsaved}). */
    private int resetUnsavedAtSaves = -1;
    /** The operators' floor before the first reset since the last save that worked whose own save failed. */
    PositionImpl floorBeforeUnsavedReset;
    /** Crashes and reset-cursors so far: the two events that may move a retained position back. */
    int rewinds;
    private PositionImpl markDeletedAtResetStart;
    private final ArrayDeque<String> trace = new ArrayDeque<>();

    DispatchModel(long seed) {
        this(seed, GRACE_SECONDS);
    }

    /**
     * A schedule whose disconnected positions are retained for {@code retentionSeconds}: longer than the reconnect
     * grace (60 s), positions outlive the recovery window and restored ones keep their own expiry; shorter (0 too),
     * restored ones are still kept the grace.
     */
    DispatchModel(long seed, int retentionSeconds) {
        this(seed, retentionSeconds, (seed & 1) == 0, (seed & 2) == 0);
    }

    /**
     * As above; {@code outOfOrder}: storage answers in any order (the default for even seeds). A schedule recorded
     * before the forty-third session, when storage answered in order and every save succeeded, replays with false.
     */
    DispatchModel(long seed, int retentionSeconds, boolean outOfOrder) {
        this(seed, retentionSeconds, outOfOrder, false);
    }

    /**
     * As above; {@code failedSaves}: one save in six fails as the metadata store fails one, and a graceful move's save
     * on close in four (the default for seeds whose second bit is clear, since the forty-fourth session).
     */
    DispatchModel(long seed, int retentionSeconds, boolean outOfOrder, boolean failedSaves) {
        this.seed = seed;
        this.retentionNanos = retentionSeconds * 1_000_000_000L;
        this.rnd = new Random(seed);
        // Its own stream, so that the schedule's other draws stay those of the seed: when a periodic save's capture
        // (background work) runs against the dispatch tasks.
        world.backgroundOrder = new Random(seed ^ 0x5DEECE66DL);
        this.ledger = new ModelLedger(3, 1 + rnd.nextInt(6));
        // Its own stream too; in half the schedules storage answers out of order (forty-third session).
        if (outOfOrder) {
            ledger.answerOutOfOrder(new Random(seed ^ 0x2545F4914F6CDD1DL));
        }
        if (failedSaves) {
            positions.saveFaults = new Random(seed ^ 0x5AFE5AFEL); // and its own (forty-fourth session)
        }
        this.config = ModelHarness.config(1 + rnd.nextInt(12), 1 + rnd.nextInt(8), GRACE_SECONDS, retentionSeconds,
                rnd.nextInt(4) == 0 ? 1 + rnd.nextInt(3) : 1000, rnd.nextInt(5) == 0 ? 0 : 1000 + rnd.nextInt(9000));
        this.floor = ledger.markDeleted();
        this.budget = rnd.nextInt(4) == 0 ? new WindowBudget(100 + rnd.nextInt(400)) : WindowBudget.unlimited();
        // The parts read what is set above; they draw nothing when made.
        this.consumers = new ModelConsumers(this);
        this.recovery = new ModelRecovery(this);
        this.finish = new ModelDrain(this);
        this.engine = recovery.newEngine(new SubscriptionStart(positions, null, false));
    }

    /** Runs {@code steps} random steps, a drain and the final checks; throws {@link AssertionError} on a violation. */
    void run(int steps) {
        ledger.transactions.buffered = rnd.nextBoolean(); // a broker with transactions on, or off
        for (int i = 0; i < steps; i++) {
            step();
            checkNoLoss();
        }
        finish.drain();
        finish.closeAndCheckLeaks();
    }

    // ----- the schedule -----

    private void step() {
        int r = rnd.nextInt(1000);
        if (r < 180) {
            int n = 1 + rnd.nextInt(3);
            for (int i = 0; i < n; i++) {
                int kind = rnd.nextInt(40);
                if (kind < 3) {
                    boolean aborted = kind == 0;
                    note("publish " + (aborted ? "aborted message " : "marker ") + ledger.publishWithheld(aborted));
                } else if (kind < 5 && ledger.transactions.buffered) {
                    transactionStep();
                } else {
                    note("publish " + ledger.publish(rnd.nextInt(5) == 0));
                }
            }
        } else if (r < 430) {
            for (int n = 1 + rnd.nextInt(5); n > 0 && world.runOne(); n--) {
                note("task");
            }
        } else if (r < 560) {
            if (ledger.completeOne()) {
                note("storage answers");
            }
        } else if (r < 700) {
            consumers.consumeSome();
        } else if (r < 760) {
            consumers.join();
        } else if (r < 800) {
            consumers.leaveOne();
        } else if (r < 830) {
            consumers.redeliverOne();
        } else if (r < 880) {
            note("sync");
            world.post(engine::sync);
        } else if (r < 920) {
            long ms = 100 + rnd.nextInt(rnd.nextInt(10) == 0 ? 90_000 : 3_000);
            note("advance " + ms + " ms");
            world.advance(ms);
        } else if (r < 935) {
            ledger.failNextReads = 1 + rnd.nextInt(3);
            note("fail next reads: " + ledger.failNextReads);
        } else if (r < 950) {
            operatorSkip();
        } else if (r < 960) {
            resetStep();
        } else if (r < 966) {
            recovery.reload();
        } else if (r < 975) {
            consumers.connectionDies();
        } else {
            consumers.lastLeavesWhileAnotherJoins();
        }
    }

    /**
     * A transaction opens (what is written from now on waits for it and for those open before it) or one of the open
     * ones ends (the max read position moves to the next oldest's bound, or is lifted).
     */
    private void transactionStep() {
        ModelTransactions transactions = ledger.transactions;
        if (transactions.openCount() > 0 && (transactions.openCount() == 3 || rnd.nextBoolean())) {
            transactions.end(rnd.nextInt(3));
            note("a transaction ends, the max read position " + transactions.maxRead);
        } else {
            transactions.open(ledger.lastConfirmed());
            note("a transaction opens after " + ledger.lastConfirmed() + ", the max read position "
                    + transactions.maxRead);
        }
    }

    void note(String what) {
        trace.add(what);
        if (trace.size() > Integer.getInteger("broadcast.model.trace", 60)) {
            trace.poll();
        }
    }

    // ----- operators and the broker -----

    private void operatorSkip() {
        List<PositionImpl> candidates = ledger.between(ledger.markDeleted(), ledger.lastConfirmed());
        if (!candidates.isEmpty() && !resetPending) {
            PositionImpl to = candidates.get(rnd.nextInt(candidates.size()));
            ledger.moveMarkDeleteForward(to);
            if (to.compareTo(floor) > 0) {
                floor = to;
            }
            for (ModelIdentity id : consumers.identities.values()) {
                id.floorAt(to);
            }
            note("operator skips to " + to);
        }
    }

    /** A reset-cursor: its first call begins it (every consumer is disconnected), the next one ends it. */
    void resetStep() {
        if (!resetPending) {
            resetPending = true;
            engine.beginReset();
            markDeletedAtResetStart = ledger.markDeleted();
            note("reset begins");
            consumers.leaveAll();
            return;
        }
        List<PositionImpl> all = ledger.between(PositionImpl.get(0, -1), ledger.lastConfirmed());
        PositionImpl to = all.isEmpty() || rnd.nextInt(4) == 0 ? PositionImpl.get(3, -1)
                : all.get(rnd.nextInt(all.size()));
        ledger.resetTo(to);
        int failedBefore = positions.failedSaves;
        engine.cursorReset();
        boolean saveFailed = positions.failedSaves != failedBefore; // the store's word, not the engine's
        CompletableFuture<Void> answer = engine.finishReset(CompletableFuture.completedFuture(null));
        check(answer.isDone() && answer.isCompletedExceptionally() == saveFailed, "the reset's answer ("
                + answer + ") does not tell whether its save failed (" + saveFailed + ")");
        if (saveFailed) {
            // The operator is told; until a save works, a crash may bring back positions from before the reset.
            if (!resetUnsaved()) { // after two failed resets with no save between, the first one's positions count
                consumers.identities.values().forEach(id -> id.ackedBeforeUnsavedReset = id.cumAcked);
                floorBeforeUnsavedReset = floor;
            }
            resetUnsavedAtSaves = positions.saves;
            resetRefusesAtSaves = positions.saves;
            note("its save failed: the reset answers an error");
        }
        resetPending = false;
        rewinds++;
        floor = to;
        recovery.reopenWindow();
        // Every retained position starts again at the reset position, retained from now. Saved expiry times are
        // whole seconds, so a position restored from a save may be kept up to a second longer than the model's
        // retention: within that second the engine's own save at the reset tells (seed 3235706080123355).
        Set<String> keptByEngine = positions.capturedNames();
        for (ModelIdentity id : consumers.identities.values()) {
            if (id.retained() || (id.retainedFor(-1_000) && keptByEngine.contains(id.name))) {
                id.startAt(to);
                id.ackedAtLeave = to; // resumed later, at the reset position or past it
                id.rewindsAtLeave = rewinds;
                id.leftAtNanos = world.nowNanos;
                id.expiresAtNanos = world.nowNanos + retentionNanos;
            } else {
                id.dropped = true;
            }
        }
        note("reset to " + to);
    }

    /**
     * The store's count of saves when a reopen's save failed (the store may still hold the failed close's save on
     * close), or -1; see {@link #newNamesRefused}.
     */
    int reopenUnsavedAtSaves = -1;
    /**
     * The store's count of saves when a reset's save failed on this owner (the store holds a join floor from before
     * the reset), or -1; see {@link #newNamesRefused}.
     */
    int resetRefusesAtSaves = -1;

    /**
     * Whether new names are refused: a reopen's or a reset's save failed and no save has worked since, on this owner
     * (after a reset, a new name would start below the join floor the store holds, and a crash would bring it back at
     * that floor, past what it was sent: seed 20261211795669).
     */
    boolean newNamesRefused() {
        return (reopenUnsavedAtSaves >= 0 && reopenUnsavedAtSaves == positions.saves)
                || (resetRefusesAtSaves >= 0 && resetRefusesAtSaves == positions.saves);
    }

    /** Whether the last reset answered an error because its save failed, and no save has worked since. */
    boolean resetUnsaved() {
        return resetUnsavedAtSaves >= 0 && resetUnsavedAtSaves == positions.saves;
    }

    // ----- checks -----

    void checkNoLoss() {
        check(ledger.transactions.violations.isEmpty(), "reads past an open transaction: "
                + ledger.transactions.violations);
        for (ModelSession s : consumers.sessions) {
            check(s.bc.cursor.acknowledged().compareTo(s.bc.cursor.highestSent()) <= 0, s.id.name + "'s acknowledged"
                    + " position is past the highest it was sent: " + s.bc.cursor);
        }
        PositionImpl markDeleted = ledger.markDeleted();
        if (resetPending) {
            check(markDeleted.equals(markDeletedAtResetStart), "the mark-delete moved during a reset");
        }
        for (ModelIdentity id : consumers.identities.values()) {
            // Retained, or a name the last save before a crash did not hold, while the recovery window protects it.
            if (id.retained() || (id.unsavedAtCrash && world.nowNanos - id.protectedUntilNanos < 0)) {
                id.absorb(); // markers written after its last acknowledgement
                check(markDeleted.compareTo(max(id.cumAcked, floor)) <= 0, "the mark-delete position "
                        + markDeleted + " passed " + id.name + "'s acknowledged position " + id.cumAcked
                        + (id.connected ? " (connected)" : " (retained)"));
            }
        }
    }

    static PositionImpl max(PositionImpl a, PositionImpl b) {
        return a.compareTo(b) >= 0 ? a : b;
    }

    void check(boolean ok, String what) {
        if (!ok) {
            throw fail(what);
        }
    }

    AssertionError fail(String what) {
        String retention = retentionNanos == GRACE_SECONDS * 1_000_000_000L ? ""
                : " (retention " + retentionNanos / 1_000_000_000L + " s: -Dbroadcast.model.retentionSeconds)";
        return new AssertionError("seed " + seed + retention + ": " + what + "\n  engine: " + engine
                + "\n  storage: mark-delete " + ledger.markDeleted() + ", read position " + ledger.readPosition()
                + ", last " + ledger.lastConfirmed() + "\n  last steps: " + String.join(" | ", trace));
    }
}
