package io.github.pulsarbroadcast.broadcast.dispatch;

import io.github.pulsarbroadcast.broadcast.WindowBudget;
import java.util.ArrayList;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;

/**
 * The end of one {@link DispatchModel} schedule: a drain without faults (consumers take and acknowledge everything,
 * time passes until nothing is left to do), then the final checks: <b>liveness</b> (every connected consumer
 * acknowledged every message, the mark-delete position reached the end) and <b>no leak</b> (every entry buffer read
 * from storage was released and the window budget given back once everything closed).
 *
 * <p>Threading: single-threaded (the model test's thread), like the rest of the model.
 */
final class ModelDrain {

    private final DispatchModel model;
    private final ModelConsumers consumers;
    private final ModelHarness world;
    private final ModelLedger ledger;

    /** The end of {@code model}'s schedule (its consumers, world and ledger must be set). */
    ModelDrain(DispatchModel model) {
        this.model = model;
        this.consumers = model.consumers;
        this.world = model.world;
        this.ledger = model.ledger;
    }

    /** No more faults; consumers take and acknowledge everything; time passes until nothing is left to do. */
    void drain() {
        model.note("drain");
        if (model.resetPending) {
            model.resetStep();
        }
        ledger.failNextReads = 0;
        model.positions.saveFaults = null;
        ledger.transactions.endAll(); // what open transactions held may be read now
        if (consumers.sessions.isEmpty()) {
            consumers.join(ModelConsumers.NAMES[0], InitialPosition.Earliest);
        }
        int idleRounds = 0;
        for (int round = 0; round < 2_000; round++) {
            boolean busy = false;
            for (int steps = 0; world.runOne() || ledger.completeOne(); steps++) {
                busy = true;
                model.checkNoLoss();
                model.check(steps < 100_000, "livelock: 100,000 dispatch tasks and storage answers without a pause"
                        + " (" + stuck() + ")");
            }
            for (ModelSession s : consumers.sessions) {
                if (!s.inbox.isEmpty()) {
                    busy = true;
                    consumers.consume(s, Integer.MAX_VALUE, false);
                }
                if (s.consumedSinceFlow > 0) {
                    s.credit += s.consumedSinceFlow;
                    model.engine.flow(s.bc, s.consumedSinceFlow);
                    s.consumedSinceFlow = 0;
                    busy = true;
                }
            }
            if (!busy) {
                if (consumers.sessions.isEmpty()) {
                    consumers.join(ModelConsumers.NAMES[0], InitialPosition.Earliest); // refused while a save is due
                    if (!consumers.sessions.isEmpty()) {
                        // Joined: its join and first flow run in the next round, before anything is checked (a model
                        // error the refusal after a failed reset's save showed, seed 20261183787928).
                        continue;
                    }
                }
                if (!consumers.sessions.isEmpty() && done()) {
                    return;
                }
                if (++idleRounds % 10 == 0) {
                    // First: nobody may be left waiting with permits while something readable was not sent to it (a
                    // client without an ack timeout never asks again). Then an ack timeout: what a consumer left
                    // unacknowledged, or acknowledged past the range bound, is sent again, and acknowledged again.
                    checkNoneLeftWaiting();
                    redeliverWhereOwed();
                }
                long next = world.nextScheduledInMs();
                world.advance(next >= 0 ? Math.max(next, 1) : 1_000);
                world.post(model.engine::sync);
            }
        }
        throw model.fail("not drained: " + stuck());
    }

    /** Idle, with permits, and an entry it should get next that it was not sent: the engine lost its wake-up. */
    private void checkNoneLeftWaiting() {
        PositionImpl end = ledger.lastConfirmed();
        for (ModelSession s : consumers.sessions) {
            if (s.credit <= 0 || !s.inbox.isEmpty()) {
                continue;
            }
            for (PositionImpl q : ledger.between(ledger.previous(s.bc.cursor.sending.next()), end)) {
                if (!ledger.transactions.isWithheld(q) && !s.bc.cursor.isIndividuallyAcknowledged(q)) {
                    throw model.fail(s.id.name + " has " + s.credit + " permits and was not sent " + q
                            + ", readable, while nothing else was left to do (engine " + s.bc + ", state "
                            + s.bc.state + ")");
                }
            }
        }
    }

    private void redeliverWhereOwed() {
        for (ModelSession s : new ArrayList<>(consumers.sessions)) {
            if (s.owesRedelivery) {
                consumers.redeliver(s);
            }
        }
    }

    private boolean done() {
        PositionImpl end = ledger.lastConfirmed();
        for (ModelSession s : consumers.sessions) {
            s.id.absorb(); // markers written after its last acknowledgement
            if (s.id.cumAcked.compareTo(end) < 0) {
                return false;
            }
        }
        // Retained positions of absent consumers expire and the recovery window ends as time passes: then the
        // mark-delete position must reach the end.
        return ledger.markDeleted().compareTo(end) >= 0;
    }

    private String stuck() {
        StringBuilder sb = new StringBuilder("last " + ledger.lastConfirmed() + ", mark-delete "
                + ledger.markDeleted());
        for (ModelSession s : consumers.sessions) {
            sb.append("; ").append(s.id.name).append(" acked ").append(s.id.cumAcked).append(" engine ")
                    .append(s.bc).append(" state ").append(s.bc.state).append(" ranges ")
                    .append(s.bc.cursor.<String>save((acked, ranges) -> java.util.Arrays.toString(ranges)));
        }
        return sb.toString();
    }

    /** Everything closes and settles: no entry buffer and no byte of the window budget may remain held. */
    void closeAndCheckLeaks() {
        model.engine.close();
        consumers.leaveAll();
        model.engine.closeFanOut();
        while (world.runOne() || ledger.completeOne()) {
            // finish
        }
        model.check(ledger.unreleased().isEmpty(), ledger.unreleased().size()
                + " entry buffers were never released");
        WindowBudget budget = model.budget;
        model.check(budget.used() == 0, budget.used() + " bytes of the window budget were never given back");
    }
}
