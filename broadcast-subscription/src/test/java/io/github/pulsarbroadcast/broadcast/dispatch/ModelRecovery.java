package io.github.pulsarbroadcast.broadcast.dispatch;

import static io.github.pulsarbroadcast.broadcast.dispatch.DispatchModel.GRACE_SECONDS;
import static io.github.pulsarbroadcast.broadcast.dispatch.DispatchModel.max;

import io.github.pulsarbroadcast.broadcast.positions.SavedPosition;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletionException;
import org.apache.bookkeeper.mledger.impl.PositionImpl;

/**
 * The topic's moves in one {@link DispatchModel} schedule and what the new owner recovers: graceful reloads (the
 * positions are saved on close), crashes (the new owner has only the last periodic save), loads that fail and
 * graceful closes that fail half-way and reopen; each new engine starts as the installer starts it
 * ({@link StartDecision}). Keeps the reference's side of it: which names the new owner must restore, and the
 * recovery window (until when it is open, where {@code Latest} joins start in it).
 *
 * <p>Threading: single-threaded (the model test's thread), like the rest of the model.
 */
final class ModelRecovery {

    private final DispatchModel model;
    private final ModelHarness world;
    private final ModelLedger ledger;
    private final ModelPositionStore positions;
    /**
     * Whether a reload's load fails, or a graceful close fails half-way: its own stream, so that the schedule's other
     * draws stay those of the seed.
     */
    private final Random faults;
    private long recoveryUntilNanos;
    /** Where {@code Latest} joins start in the recovery window (the saved join floor), or null (mark-delete). */
    private PositionImpl recoveryFloor;

    /** The moves of {@code model}'s topic (its world, ledger, positions, configuration and budget must be set). */
    ModelRecovery(DispatchModel model) {
        this.model = model;
        this.world = model.world;
        this.ledger = model.ledger;
        this.positions = model.positions;
        this.faults = new Random(model.seed ^ 0x10ADFA11L);
    }

    /** An engine that starts as {@code start} says; its recovery window becomes the model's. */
    SubscriptionEngine newEngine(SubscriptionStart start) {
        // A new engine has a recovery window only when it starts without saved positions.
        long window = start.windowNanos >= 0 ? start.windowNanos : GRACE_SECONDS * 1_000_000_000L;
        recoveryUntilNanos = start.recovering ? world.nowNanos + window : Math.min(recoveryUntilNanos, world.nowNanos);
        recoveryFloor = start.recovering && start.joinFloor != null
                ? PositionImpl.get(start.joinFloor.ledgerId(), start.joinFloor.entryId()) : null;
        return new SubscriptionEngine("persistent://model/ns/topic", "fleet", -1, ledger, model.config, model.budget,
                world, () -> world.nowNanos, start);
    }

    /** Whether the recovery window is open. */
    boolean recovering() {
        return world.nowNanos - recoveryUntilNanos < 0;
    }

    /**
     * The recovery window opens again for the reconnect grace, {@code Latest} joins starting at the mark-delete
     * position (a reset-cursor ended, or a graceful close failed half-way and the subscription reopened).
     */
    void reopenWindow() {
        recoveryUntilNanos = world.nowNanos + GRACE_SECONDS * 1_000_000_000L;
        recoveryFloor = null;
    }

    /**
     * The topic moves: gracefully (the positions are saved on close) or by a crash (the new owner loads the last
     * periodic save). Like the installer, the new engine restores saved positions, or opens the recovery window when
     * there are none (saving off, or nothing saved yet).
     */
    void reload() {
        if (model.resetPending) {
            return;
        }
        boolean crash = model.rnd.nextBoolean();
        // A graceful close that fails half-way (stock resumeAfterFence): the subscription resumes on this broker.
        boolean closeFails = !crash && model.config.positionSyncIntervalMs() > 0 && faults.nextInt(4) == 0;
        if (crash) {
            model.engine.deleting(true); // a crashed broker saves nothing more
        } else if (positions.saveFaults != null) {
            // A graceful move whose save on close fails: the close goes on, and the new owner has only the last save
            // that worked, as after a crash. A close that fails half-way keeps its capture (its reference needs it).
            positions.nextSaveFails = !closeFails && faults.nextInt(4) == 0;
        }
        boolean closeSaveFailed = model.engine.close().isCompletedExceptionally();
        model.note(crash ? "crash" : closeFails ? "close fails half-way" : closeSaveFailed
                ? "reload, its save on close failed" : "reload");
        positions.nextSaveFails = null;
        model.consumers.leaveAll();
        crash |= closeSaveFailed; // from here on, for what the new owner restores
        if (crash) {
            model.rewinds++; // after the leaves: what they left with may come back lower
            model.consumers.identities.values().forEach(ModelIdentity::forgetConfirmed);
        }
        model.engine.closeFanOut();
        while (world.runOne() || ledger.completeOne()) {
            // let the old engine finish and release what it holds
        }
        if (closeFails) {
            // The positions captured at the close come back (the close's save holds the same capture; read before
            // the reopen's own save, whose expiry times are rounded to whole seconds), with the recovery window at
            // the mark-delete position for anything since.
            positionsRestored(false, positions.saved != null && !positions.saved.isEmpty());
            int failedBefore = positions.failedSaves;
            model.engine.reopen();
            if (positions.failedSaves != failedBefore) {
                model.reopenUnsavedAtSaves = positions.saves;
                model.note("its save at the reopen failed");
            }
            reopenWindow();
            return;
        }
        ledger.reload();
        // The new owner starts as the installer starts it (StartDecision); one load in four fails (the metadata store
        // did not answer): the subscribe is refused, the store left as it is, and the client's retry loads again.
        boolean loadFails = model.config.positionSyncIntervalMs() > 0 && faults.nextInt(4) == 0;
        if (loadFails) {
            positions.failNextLoad = true;
            int savesBefore = positions.saves;
            try {
                StartDecision.resume(positions, model.config, world::wallMillis, () -> true, "[model]").join();
                throw model.fail("a failed load started the subscription instead of refusing it");
            } catch (CompletionException refused) {
                if (positions.saves != savesBefore) {
                    throw model.fail("a failed load wrote to the position store: " + refused);
                }
            }
            positions.failNextLoad = false;
            model.note("its load failed: refused, retried");
        }
        SubscriptionStart start = StartDecision.resume(positions, model.config, world::wallMillis, () -> true,
                "[model]").join();
        // What the new owner must restore, judged apart from the decision under test.
        positionsRestored(crash, model.config.positionSyncIntervalMs() > 0 && positions.saved != null
                && !positions.saved.isEmpty());
        model.engine = newEngine(start);
        model.reopenUnsavedAtSaves = -1; // a new owner's own state
        model.resetRefusesAtSaves = -1;
    }

    /**
     * The reference after a load (or a reopen): names the last save holds come back ({@code restore}); others lose
     * their position, and those that had one at a crash stay protected for the recovery window.
     */
    private void positionsRestored(boolean crash, boolean restore) {
        Set<String> saved = restore ? positions.savedNames() : Set.of();
        PositionImpl markDeleted = ledger.markDeleted();
        // A reset that answered an error (its save failed) and no save since: the last save is from before it.
        boolean resetUndone = crash && model.resetUnsaved();
        if (resetUndone) {
            // The join floor the last save holds is from before the reset too: new names start at or past it.
            model.floor = max(model.floor, model.floorBeforeUnsavedReset);
        }
        for (ModelIdentity id : model.consumers.identities.values()) {
            boolean wasRetained = id.retained();
            // Unsaved at a crash, or still so at a graceful move inside the window a crash opened.
            boolean unsavedNow = crash && wasRetained && !saved.contains(id.name);
            boolean stillUnsaved = id.unsavedAtCrash && world.nowNanos - id.protectedUntilNanos < 0
                    && !saved.contains(id.name);
            id.unsavedAtCrash = unsavedNow || stillUnsaved;
            if (unsavedNow) {
                id.protectedUntilNanos = world.nowNanos + GRACE_SECONDS * 1_000_000_000L;
            }
            id.dropped |= !saved.contains(id.name);
            if (saved.contains(id.name)) {
                if (!wasRetained || id.freshAtSave == positions.saves || resetUndone) {
                    // Its retention ran out before the crash, but the last save still held it: the new owner brings
                    // the saved position back, no lower than the mark-delete (seed 3619332101975234). The same when
                    // the name started afresh after its retention ran out and no save followed: the last save holds
                    // its earlier position, which it had acknowledged (seed 3043750001251942).
                    adoptSaved(id, markDeleted);
                }
            } else if (resetUndone && id.ackedBeforeUnsavedReset != null && id.cumAcked != null) {
                // Not in that save: the join floor it holds is from before the reset too.
                id.ack(id.ackedBeforeUnsavedReset, true);
            }
            if (saved.contains(id.name)) {
                // A restored position keeps the expiry the save recorded, but at least the reconnect grace from the
                // load; one saved while its consumer was connected is retained for the retention from the load, also
                // at least the grace (a retention shorter than the grace, 0 included).
                id.leftAtNanos = Math.max(id.leftAtNanos, world.nowNanos);
                long untilMs = positions.retainedUntilMillis(id.name);
                long grace = GRACE_SECONDS * 1_000_000_000L;
                id.expiresAtNanos = world.nowNanos + Math.max(grace, untilMs == 0 ? model.retentionNanos
                        : (untilMs - world.wallMillis()) * 1_000_000L);
            }
        }
    }

    /** Where a {@code Latest} join starts in the recovery window: the saved join floor, within mark-delete..tail. */
    PositionImpl windowStart() {
        PositionImpl markDeleted = ledger.markDeleted();
        if (recoveryFloor == null || recoveryFloor.compareTo(markDeleted) <= 0) {
            return markDeleted;
        }
        return recoveryFloor.compareTo(ledger.lastConfirmed()) < 0 ? recoveryFloor : ledger.lastConfirmed();
    }

    /** {@code id} takes the saved position of its name as the engine restores it: at or above {@code floor}. */
    private void adoptSaved(ModelIdentity id, PositionImpl floor) {
        for (SavedPosition p : positions.saved) {
            if (p.name().equals(id.name)) {
                id.startAt(max(PositionImpl.get(p.ackedLedger(), p.ackedEntry()), floor));
                long[] r = p.ranges();
                for (int i = 0; i + 2 < r.length; i += 3) {
                    for (long e = r[i + 1]; e < r[i + 2]; e++) {
                        id.ack(PositionImpl.get(r[i], e), false);
                    }
                }
                id.dropped = false;
            }
        }
    }
}
