package io.github.pulsarbroadcast.broadcast.dispatch;

import org.testng.annotations.Test;

/**
 * The randomized model test of the dispatch core ({@link DispatchModel}): thousands of random schedules per run, each
 * checked step by step against a reference model. A failure names its seed; rerun exactly that schedule with
 * {@code -Dbroadcast.model.seed=<seed>}. {@code -Dbroadcast.model.base=random} draws new schedules (the default is a
 * fixed set, so that the suite does not fail on a schedule nobody has looked at yet);
 * {@code -Dbroadcast.model.schedules=N} (and {@code ...steps=N}) make the long nightly run, for example
 * {@code ./mvnw -pl broadcast-subscription test -Dgroups=unit -Dtest=DispatchModelTest
 * -Dbroadcast.model.base=random -Dbroadcast.model.schedules=200000}. The main run retains a disconnected consumer's
 * position for the reconnect grace (60 s, the two equal); a third as many schedules retain it three times as long
 * ({@code -Dbroadcast.model.retentionSeconds}, 180 by default there), so that positions outlive the recovery window
 * and restored ones keep their own expiry, and as many retain it not at all (0: restored positions must still be kept
 * the grace). A failure there names its retention; replay it with both properties.
 */
public class DispatchModelTest {

    private static final long SEED = Long.getLong("broadcast.model.seed", -1L);
    private static final int SCHEDULES = Integer.getInteger("broadcast.model.schedules", 3_000);
    private static final int STEPS = Integer.getInteger("broadcast.model.steps", 300);
    private static final int LONG_RETENTION_SECONDS = Integer.getInteger("broadcast.model.retentionSeconds", 180);

    /**
     * Schedules that once failed, replayed on every run (they depend on the model's draws, so they are re-recorded
     * when the model changes; the named cases are in docs/design.md):
     * 659425918276707 and 2984048002117372: a consumer that left while catching up stayed filed among the
     * catching-up ones (it was looked up by its cursor's next position, which the consumer resuming the same name
     * had rewound); the next catch-up read served it and moved the shared cursor past entries the resumed consumer
     * never received (CatchUpReads.forget by the key filed under, removed consumers never served).
     * 3234608335796003: a consumer reconnected after the last save, then the broker crashed: its saved retention
     * had nearly run out (restored positions are kept at least the reconnect grace).
     * 2802040778097299: saved expiry times must follow the same clock as the model (DispatchLoop.wallMillis).
     * 1294864897593036: an empty range left open at its lower end blocked the absorb of later individual acks
     * (AckRanges.dropOpenResidue; VirtualCursorTest names the case).
     * 3619332101975234: a consumer's retention ran out, the mark-delete moved past its position, then the broker
     * crashed before the next save: the new owner restores the stale position (the model expected the old one; it
     * now expects it no lower than the mark-delete, where the engine starts restored positions).
     * 3235706080123355: a reset-cursor ended less than a second after a restored position's retention ran out in the
     * model; the engine still kept it (saved expiry times are whole seconds) and restarted it at the reset position,
     * so the consumer resumed where the model said it had been dropped. A model error: the model now accepts either
     * within that second, as the engine's save at the reset shows.
     * 3043750001251942: a name's retention ran out, it joined again afresh (at the mark-delete), and the broker crashed
     * before the next save: the new owner restored the name's earlier saved position, which that consumer had
     * acknowledged before (ahead of its fresh start). A model error: the model now expects the saved position.
     * 20261183783467 (the default set): a save captured during a recovery window must record the window's own
     * start as its join floor, not the tail: a consumer that joined in the window (below the tail) and was missing
     * from that save came back after a crash at the tail, past what it had acknowledged (RecoveryWindow.joinFloor).
     * 20261183784282 (the default set): the reset's own save must be captured after its recovery window opened (the
     * order SubscriptionEngine.cursorReset had before the join floor); otherwise it records the tail as the floor, and
     * a consumer that joined at the reset position came back after a crash at the tail.
     * 20261183783384 and 20261183786380 (retention 180 s) (the default set): a consumer joined after the last save,
     * the broker crashed, and the new owner's topic moved gracefully inside the recovery window: its save on close
     * carried nothing of the window, the next owner opened none, and the consumer came back at the tail, past what it
     * had acknowledged (the save now carries the window's end, RecoveryWindow.joinFloor; the model's reference keeps
     * such a name protected for the crash's window across graceful moves, and clears the "saved on close" mark at
     * each load as the store's take-over does). Both fail with the window's end left out of the save.
     * 1314848850539540 (thirtieth session, once the model's loads could fail): the new owner's load failed, so its
     * recovery window started consumers it did not know at the mark-delete position, but until its first save the
     * store still held the previous owner's snapshot and join floor; a consumer joined below that floor, the broker
     * crashed, and the next owner started it at the floor, past what it had been sent (StartDecision.resume then
     * replaced the snapshot with an empty one before the subscription started; since the forty-second session a
     * failed load refuses the subscribe and leaves the snapshot, which the retry restores).
     * 759256962765227 (thirtieth session, once graceful closes could fail half-way): after the reopen the store still
     * said the positions were saved on close; a consumer joined, the broker crashed before the next periodic save, the
     * next owner opened no recovery window and the consumer came back at the tail (SubscriptionEngine.reopen now saves
     * at once). StartAfterFailureTest names the two cases.
     * Some schedules depend on the iteration order of identity-keyed maps (sends per connection), so a seed may need
     * a few runs to fail again. Since a periodic save's capture became background work (experiment 10), seeds whose
     * schedule involved a save no longer replay it exactly; they stay as schedules that once found a bug.
     */
    private static final long[] REGRESSIONS = {659425918276707L, 2984048002117372L, 3234608335796003L,
        2802040778097299L, 1294864897593036L, 3619332101975234L, 3235706080123355L,
        3043750001251942L, 20261183783467L, 20261183784282L, 1314848850539540L, 759256962765227L};

    /**
     * Found since the forty-fourth session, when saves began to fail and malformed entries to be read (each replays
     * with the faults its seed draws): {seed, retention in seconds}. 20261183783817: a reset whose save failed
     * answered success, and a crash undid it (ResetAnswerTest). 20261207788097: a reopen whose save failed accepted
     * a new consumer, which a crash brought back at the tail (StartAfterFailureTest). 20261207831040 (retention 0): a
     * livelock of the model's own (its mark-delete did not move the read position forward, as stock's does).
     * 20261208804500: the model's reference kept the lowered operators' floor of a reset a crash undid.
     * 20261211795669 (forty-fifth session): a consumer new to the subscription joined after a reset whose save failed,
     * below the join floor the store still held from before the reset, and a crash brought it back at that floor
     * (ResetAnswerTest.aResetWhoseSaveFailsRefusesNewNamesUntilASaveWorks).
     */
    private static final long[][] REGRESSIONS_WITH_FAULTS = {{20261183783817L, 60}, {20261207788097L, 60},
        {20261207831040L, 0}, {20261208804500L, 60}, {20261211795669L, 60}};

    @Test(groups = "unit", timeOut = 60_000)
    public void schedulesThatOnceFailed() {
        for (long seed : REGRESSIONS) {
            new DispatchModel(seed, DispatchModel.GRACE_SECONDS, false).run(STEPS); // recorded with answers in order
        }
        for (long[] recorded : REGRESSIONS_WITH_FAULTS) {
            new DispatchModel(recorded[0], (int) recorded[1]).run(STEPS);
        }
    }

    @Test(groups = "unit", timeOut = 600_000)
    public void randomSchedulesKeepEveryGuarantee() {
        if (SEED >= 0) {
            new DispatchModel(SEED, Integer.getInteger("broadcast.model.retentionSeconds", 60)).run(STEPS);
            return;
        }
        long base = base();
        System.out.println("DispatchModelTest: " + SCHEDULES + " schedules of " + STEPS + " steps, seeds from "
                + base);
        for (int i = 0; i < SCHEDULES; i++) {
            new DispatchModel(base + i).run(STEPS);
        }
    }

    @Test(groups = "unit", timeOut = 600_000)
    public void randomSchedulesWithRetentionLongerThanTheGrace() {
        if (SEED >= 0) {
            return; // the replay runs in randomSchedulesKeepEveryGuarantee
        }
        long base = base() + SCHEDULES;
        int schedules = SCHEDULES / 3;
        System.out.println("DispatchModelTest: " + schedules + " schedules of " + STEPS + " steps with a retention of "
                + LONG_RETENTION_SECONDS + " s, seeds from " + base);
        for (int i = 0; i < schedules; i++) {
            new DispatchModel(base + i, LONG_RETENTION_SECONDS).run(STEPS);
        }
    }

    /**
     * A retention of 0 (a disconnect drops the position at once): positions restored at a load must still be kept the
     * reconnect grace, or a consumer connected across a move would come back as a new name (thirty-sixth session:
     * until then no schedule had a retention shorter than the grace; the model's reference then expected such a
     * restored position to expire at once, a model error the first run of these schedules showed). A failure names
     * its retention: replay it with {@code -Dbroadcast.model.seed} and {@code -Dbroadcast.model.retentionSeconds=0}.
     */
    @Test(groups = "unit", timeOut = 600_000)
    public void randomSchedulesWithoutRetention() {
        if (SEED >= 0) {
            return; // the replay runs in randomSchedulesKeepEveryGuarantee
        }
        long base = base() + SCHEDULES + SCHEDULES / 3;
        int schedules = SCHEDULES / 3;
        System.out.println("DispatchModelTest: " + schedules + " schedules of " + STEPS + " steps with no retention,"
                + " seeds from " + base);
        for (int i = 0; i < schedules; i++) {
            new DispatchModel(base + i, 0).run(STEPS);
        }
    }

    /**
     * The first seed: a fixed set of schedules by default (the suite must not fail on a schedule nobody has looked at
     * yet: an open finding is listed in docs/design.md); -Dbroadcast.model.base=random explores new ones.
     */
    private static long base() {
        String baseProperty = System.getProperty("broadcast.model.base", "20261123");
        return ("random".equals(baseProperty) ? System.nanoTime() & 0xffff_ffffL : Long.parseLong(baseProperty))
                * 1_000_003L;
    }
}
