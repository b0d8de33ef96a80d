package io.github.pulsarbroadcast.broadcast.dispatch;

import static io.github.pulsarbroadcast.broadcast.dispatch.DispatchModel.max;

import io.github.pulsarbroadcast.broadcast.cursor.AckResult;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.broker.service.BrokerServiceException.SubscriptionFencedException;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;

/**
 * The consumers of one {@link DispatchModel} schedule, as their clients see them: each name's {@link ModelIdentity}
 * and each connection's {@link ModelSession}. Consumers join (under a free name, checked against the position the
 * name must resume or start at), leave, lose their connection, consume with individual, cumulative and missing acks,
 * give permits and ask for redelivery; every delivery a connection is sent is checked for permits, order and gaps.
 *
 * <p>Threading: single-threaded (the model test's thread), like the rest of the model.
 */
final class ModelConsumers implements ModelHarness.Deliveries {

    private static final int QUEUE = 10;
    /** The names clients connect as. */
    static final String[] NAMES = {"car-a", "car-b", "car-c", "car-d", "car-e", "car-f"};

    private final DispatchModel model;
    private final Random rnd;
    private final ModelHarness world;
    private final ModelLedger ledger;
    final Map<String, ModelIdentity> identities = new LinkedHashMap<>();
    final List<ModelSession> sessions = new ArrayList<>();
    private final Map<BroadcastConsumer, ModelSession> byConsumer = new IdentityHashMap<>();
    private long consumerIds;

    /** The consumers of {@code model}'s schedule: none yet (its random source, world and ledger must be set). */
    ModelConsumers(DispatchModel model) {
        this.model = model;
        this.rnd = model.rnd;
        this.world = model.world;
        this.ledger = model.ledger;
    }

    ModelSession randomSession() {
        return sessions.isEmpty() ? null : sessions.get(rnd.nextInt(sessions.size()));
    }

    // ----- joins and leaves -----

    void join() {
        List<String> free = new ArrayList<>();
        for (String n : NAMES) {
            ModelIdentity id = identities.get(n);
            if (id == null || !id.connected) {
                free.add(n);
            }
        }
        if (!free.isEmpty()) {
            join(free.get(rnd.nextInt(free.size())), rnd.nextBoolean() ? InitialPosition.Latest
                    : InitialPosition.Earliest);
        }
    }

    void join(String name, InitialPosition initial) {
        ModelIdentity id = identities.computeIfAbsent(name, n -> new ModelIdentity(n, world, ledger));
        boolean recovering = model.recovery.recovering();
        PositionImpl freshStart = initial == InitialPosition.Earliest ? ledger.markDeleted()
                : recovering ? model.recovery.windowStart() : ledger.lastConfirmed();
        boolean mustResume = id.retainedFor(1_000);
        ModelHarness.Connection cnx = new ModelHarness.Connection(this);
        BroadcastConsumer bc;
        try {
            bc = model.engine.join(++consumerIds, name, cnx, initial, 0);
        } catch (SubscriptionFencedException e) {
            boolean newName = !id.retainedFor(1_000);
            model.check(model.resetPending || (model.newNamesRefused() && newName), "join refused although no"
                    + " reset runs and no reopen or reset is unsaved: " + e.getMessage());
            model.note("join " + name + " refused (" + (model.resetPending ? "reset" : "unsaved") + ")");
            return;
        } catch (Exception e) {
            throw model.fail("join " + name + " failed: " + e);
        }
        model.check(!model.resetPending, "join of " + name + " accepted during a reset");
        model.check(bc.resumed || !model.newNamesRefused(), name + " joined afresh while the store may still hold"
                + " the save on close of a close that failed or a join floor from before a reset (a crash would"
                + " bring it back past what it was sent)");
        model.check(!mustResume || bc.resumed, name
                + " rejoined within the grace period but did not resume its position");
        model.check(!bc.resumed || (!id.dropped && id.leftAtNanos >= 0), name + " resumed a position it never had");
        id.absorb(); // markers written after its last acknowledgement
        model.check(!bc.resumed || bc.cursor.acknowledged().compareTo(max(id.cumAcked, model.floor)) <= 0, name
                + " resumed at " + bc.cursor.acknowledged() + ", past what it acknowledged: " + id.cumAcked);
        model.check(!bc.resumed || id.ackedAtLeave == null || id.rewindsAtLeave != model.rewinds
                || bc.cursor.acknowledged().compareTo(id.ackedAtLeave) >= 0, name + " resumed at "
                + bc.cursor.acknowledged() + ", below " + id.ackedAtLeave + " where it left (no crash or reset since)");
        if (!bc.resumed) {
            model.check(bc.cursor.acknowledged().equals(freshStart), name + " started at "
                    + bc.cursor.acknowledged() + ", expected " + freshStart);
            model.check(!id.unsavedAtCrash || world.nowNanos - id.protectedUntilNanos >= 0 || initial != id.initial
                    || freshStart.compareTo(max(id.cumAcked, model.floor)) <= 0, name + " joined after the last save"
                    + " before the crash and came back at " + freshStart + ", past what it acknowledged: "
                    + id.cumAcked);
            id.startAt(freshStart);
            id.initial = initial;
            id.freshAtSave = model.positions.saves;
        }
        id.connected = true;
        ModelSession s = new ModelSession(id, bc, cnx);
        sessions.add(s);
        byConsumer.put(bc, s);
        s.credit = QUEUE;
        model.engine.flow(bc, QUEUE);
        model.note("join " + name + " " + initial + (bc.resumed ? " resumed" : " at " + freshStart));
    }

    void leave(ModelSession s) {
        s.id.ackedAtLeave = s.bc.cursor.acknowledged();
        s.id.rewindsAtLeave = model.rewinds;
        sessions.remove(s);
        byConsumer.remove(s.bc);
        s.id.connected = false;
        s.id.leftAtNanos = world.nowNanos;
        s.id.expiresAtNanos = world.nowNanos + model.retentionNanos;
        model.engine.leave(s.bc);
        // Stock PersistentSubscription.removeConsumer: no consumer left, so the cursor leaves the waiting list.
        if (model.engine.attachedCount() == 0) {
            ledger.removeWaitingCursor();
            model.engine.waitingCursorDropped();
        }
        model.note("leave " + s.id.name);
    }

    /** Every connection leaves, in the order they joined. */
    void leaveAll() {
        while (!sessions.isEmpty()) {
            leave(sessions.get(0));
        }
    }

    void leaveOne() {
        ModelSession s = randomSession();
        if (s != null) {
            leave(s);
        }
    }

    /** The last consumer leaves and another joins before the dispatch thread runs the leave. */
    void lastLeavesWhileAnotherJoins() {
        while (sessions.size() > 1) {
            leave(sessions.get(0));
        }
        if (sessions.size() == 1) {
            model.note("last leaves while another joins");
            leave(sessions.get(0));
            join();
        }
    }

    void connectionDies() {
        ModelSession s = randomSession();
        if (s != null) {
            model.note("connection of " + s.id.name + " dies");
            s.cnx.rejecting = true;
            leave(s);
        }
    }

    // ----- consumption -----

    void consumeSome() {
        ModelSession s = randomSession();
        if (s != null) {
            consume(s, 1 + rnd.nextInt(QUEUE), true);
        }
    }

    void consume(ModelSession s, int max, boolean mayMissAcks) {
        int taken = 0;
        while (taken < max && !s.inbox.isEmpty()) {
            PositionImpl p = s.inbox.poll();
            taken++;
            int mode = rnd.nextInt(10);
            if (mayMissAcks && mode == 0) {
                s.owesRedelivery = true;
                continue; // never acknowledged (until a redelivery sends it again)
            }
            if (mayMissAcks && mode == 1) {
                ackBefore(s, p);
                s.owesRedelivery = true;
                continue;
            }
            ack(s, p, mode >= 8);
        }
        s.consumedSinceFlow += taken;
        if (s.consumedSinceFlow >= QUEUE / 2) {
            s.credit += s.consumedSinceFlow;
            model.engine.flow(s.bc, s.consumedSinceFlow);
            s.consumedSinceFlow = 0;
        }
        if (taken > 0) {
            model.note("consume " + taken + " by " + s.id.name);
        }
    }

    private void ack(ModelSession s, PositionImpl p, boolean cumulative) {
        SubscriptionEngine engine = model.engine;
        long droppedBefore = engine.counters().droppedAcks();
        AckResult result = engine.acknowledge(s.bc, p.getLedgerId(), p.getEntryId(), cumulative);
        model.check(result != AckResult.NOT_SENT, s.id.name + ": ack of " + p + " it was sent was refused");
        // A cumulative ack of what it just took covers everything it took before: nothing is owed any more.
        s.owesRedelivery = cumulative && result != AckResult.NOT_SENT ? false
                : s.owesRedelivery || result == AckResult.DROPPED;
        if (result != AckResult.DROPPED) {
            s.id.confirm(p, cumulative);
        }
        // pulsar_broadcast_dropped_acks_total counts exactly the acks not kept for want of ranges
        model.check(engine.counters().droppedAcks() - droppedBefore == (result == AckResult.DROPPED ? 1 : 0),
                s.id.name + ": ack of " + p + " was " + result + ", the dropped-acks counter moved by "
                        + (engine.counters().droppedAcks() - droppedBefore));
        if (cumulative) {
            checkCumulative(s, p);
        }
        s.id.ack(p, cumulative);
    }

    /** A cumulative ack of {@code p} leaves the consumer's acknowledged position at {@code p} or past it. */
    private void checkCumulative(ModelSession s, PositionImpl p) {
        model.check(s.bc.cursor.acknowledged().compareTo(p) >= 0, s.id.name + ": a cumulative ack of " + p
                + " left its acknowledged position at " + s.bc.cursor.acknowledged());
    }

    /**
     * A cumulative ack inside the batch of entry {@code p}: everything before it is acknowledged (in a ledger's first
     * entry the engine gets entry -1 and takes the entry before from the ledger), {@code p} itself is not.
     */
    private void ackBefore(ModelSession s, PositionImpl p) {
        AckResult result = model.engine.acknowledge(s.bc, p.getLedgerId(), p.getEntryId() - 1, true);
        model.check(result != AckResult.NOT_SENT, s.id.name + ": ack before " + p + " it was sent was refused");
        PositionImpl before = ledger.previous(p);
        checkCumulative(s, before);
        s.id.confirm(before, true);
        s.id.ack(before, true);
    }

    void redeliverOne() {
        ModelSession s = randomSession();
        if (s != null) {
            redeliver(s);
        }
    }

    void redeliver(ModelSession s) {
        s.owesRedelivery = false;
        int cleared = s.inbox.size();
        s.inbox.clear();
        s.lastDelivered = null;
        s.epoch++;
        model.engine.redeliver(s.bc, s.epoch);
        s.credit += cleared + s.consumedSinceFlow;
        model.engine.flow(s.bc, cleared + s.consumedSinceFlow);
        s.consumedSinceFlow = 0;
        model.note("redeliver " + s.id.name);
    }

    // ----- what connections see -----

    @Override
    public void delivered(BroadcastConsumer consumer, WindowEntry entry, long epoch) {
        ModelSession s = byConsumer.get(consumer);
        if (s == null) {
            return; // the connection is gone
        }
        PositionImpl p = entry.position;
        model.check(--s.credit >= 0, s.id.name + " was sent " + p + " without a permit");
        if (epoch < s.epoch) {
            s.consumedSinceFlow++; // sent before the redelivery: the client drops it and returns the permit
            return;
        }
        model.check(!ledger.transactions.isWithheld(p), s.id.name + " was sent " + p + ", an entry for no consumer");
        model.check(!s.id.isConfirmed(p), s.id.name + " was sent " + p + " again, which the broker had recorded as"
                + " acknowledged (no crash or reset since)");
        model.check(p.compareTo(ledger.transactions.maxRead) <= 0, s.id.name + " was sent " + p
                + " past the max read position " + ledger.transactions.maxRead + " (an open transaction)");
        model.check(s.lastDelivered == null || p.compareTo(s.lastDelivered) > 0, s.id.name + " received " + p
                + " after " + s.lastDelivered);
        PositionImpl floor = model.floor;
        PositionImpl lower = max(max(s.id.start, s.id.cumAcked), floor);
        if (s.lastDelivered != null) {
            lower = max(lower, s.lastDelivered);
        }
        for (PositionImpl q : ledger.between(lower, p)) {
            model.check(q.equals(p) || s.id.acked.contains(q) || ledger.transactions.isWithheld(q), s.id.name
                    + " received " + p + " but never " + q + " (start " + s.id.start + ", acked " + s.id.cumAcked
                    + ", floor " + floor + ", last delivered " + s.lastDelivered + ", engine " + s.bc + ")");
        }
        s.lastDelivered = p;
        s.inbox.add(p);
    }

    @Override
    public void endOfTopic(long consumerId) {
        throw model.fail("end of topic on a topic that was never terminated");
    }
}
