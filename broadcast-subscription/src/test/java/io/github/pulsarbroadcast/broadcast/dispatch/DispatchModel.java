package io.github.pulsarbroadcast.broadcast.dispatch;

import io.github.pulsarbroadcast.broadcast.BroadcastConfig;
import io.github.pulsarbroadcast.broadcast.WindowBudget;
import io.github.pulsarbroadcast.broadcast.cursor.AckResult;
import io.github.pulsarbroadcast.broadcast.positions.SavedPosition;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.broker.service.BrokerServiceException.SubscriptionFencedException;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;

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
 * <p>Threading: single-threaded; the dispatch core's tasks run when the schedule says so.
 */
final class DispatchModel implements ModelHarness.Deliveries {

    private static final int QUEUE = 10;
    private static final int GRACE_SECONDS = 60;
    private static final String[] NAMES = {"car-a", "car-b", "car-c", "car-d", "car-e", "car-f"};

    /** How long a disconnected consumer's position is retained ({@code broadcastConsumerRetentionSeconds}). */
    private final long retentionNanos;

    /** A consumer name: what its client was sent and acknowledged, as the client sees it. */
    private final class Identity {
        final String name;
        PositionImpl start;
        PositionImpl cumAcked;
        final Set<PositionImpl> acked = new HashSet<>();
        long leftAtNanos = -1;
        /** When its retained position expires (set when it leaves, is reset or is restored). */
        long expiresAtNanos = -1;
        boolean connected;
        boolean dropped;
        /** The initial position it last started afresh with (a client asks for the same one when it comes back). */
        InitialPosition initial;
        /**
         * It had a position when the broker crashed, but the last save did not hold it (it joined after that save):
         * when it comes back within the recovery window with the same initial position, it must start at or below
         * what it acknowledged (duplicates, never loss).
         */
        boolean unsavedAtCrash;
        /**
         * Until when {@link #unsavedAtCrash} protects it: the recovery window of the load after the crash. A graceful
         * move inside that window does not end it (the name is still in no save).
         */
        long protectedUntilNanos;
        /**
         * The position store's save count when this name last started afresh at a join, or -1 (it then holds a
         * position that was saved, restored or reset). While no save followed it, the store may still hold this
         * name's earlier position.
         */
        int freshAtSave = -1;

        Identity(String name) {
            this.name = name;
        }

        void startAt(PositionImpl position) {
            freshAtSave = -1;
            unsavedAtCrash = false;
            start = position;
            cumAcked = position;
            acked.clear();
            dropped = false;
        }

        boolean retained() {
            return retainedFor(0);
        }

        /** Retained, with {@code slackMs} less retention (saved expiry times are wall-clock, in whole seconds). */
        boolean retainedFor(long slackMs) {
            return connected || (!dropped && leftAtNanos >= 0
                    && world.nowNanos < expiresAtNanos - slackMs * 1_000_000L);
        }

        /** An operator deleted everything up to {@code p}: it counts as acknowledged. */
        void floorAt(PositionImpl p) {
            if (cumAcked != null) {
                ack(p, true);
            }
        }

        void ack(PositionImpl p, boolean cumulative) {
            if (cumulative) {
                if (p.compareTo(cumAcked) > 0) {
                    cumAcked = p;
                }
            } else {
                acked.add(p);
            }
            for (PositionImpl n = ledger.next(cumAcked); acked.remove(n); n = ledger.next(cumAcked)) {
                cumAcked = n;
            }
            acked.removeIf(x -> x.compareTo(cumAcked) <= 0);
        }
    }

    /** One connection of a consumer (from join to leave). */
    private final class Session {
        final Identity id;
        final BroadcastConsumer bc;
        final ModelHarness.Connection cnx;
        final ArrayDeque<PositionImpl> inbox = new ArrayDeque<>();
        PositionImpl lastDelivered;
        int credit;
        int consumedSinceFlow;
        long epoch;

        Session(Identity id, BroadcastConsumer bc, ModelHarness.Connection cnx) {
            this.id = id;
            this.bc = bc;
            this.cnx = cnx;
        }
    }

    final long seed;
    private final Random rnd;
    private final ModelHarness world = new ModelHarness();
    private final ModelLedger ledger;
    private final BroadcastConfig config;
    /** Shared by the engines of this schedule (a reload makes a new one); sometimes small enough to refuse. */
    private final WindowBudget budget;
    private SubscriptionEngine engine;
    private final Map<String, Identity> identities = new LinkedHashMap<>();
    private final List<Session> sessions = new ArrayList<>();
    private final Map<BroadcastConsumer, Session> byConsumer = new IdentityHashMap<>();
    private PositionImpl floor;
    private long recoveryUntilNanos;
    /** Where {@code Latest} joins start in the recovery window (the saved join floor), or null (mark-delete). */
    private PositionImpl recoveryFloor;
    private boolean resetPending;
    private PositionImpl markDeletedAtResetStart;
    private long consumerIds;
    private final ArrayDeque<String> trace = new ArrayDeque<>();
    private final ModelPositionStore positions = new ModelPositionStore(world::wallMillis);
    /**
     * Whether a reload's load fails, or a graceful close fails half-way: its own stream, so that the schedule's other
     * draws stay those of the seed.
     */
    private final Random faults;

    DispatchModel(long seed) {
        this(seed, GRACE_SECONDS);
    }

    /**
     * A schedule whose disconnected positions are retained for {@code retentionSeconds}: longer than the reconnect
     * grace (60 s), positions outlive the recovery window and restored ones keep their own expiry; shorter (0 too),
     * restored ones are still kept the grace.
     */
    DispatchModel(long seed, int retentionSeconds) {
        this.seed = seed;
        this.retentionNanos = retentionSeconds * 1_000_000_000L;
        this.rnd = new Random(seed);
        // Its own stream, so that the schedule's other draws stay those of the seed: when a periodic save's capture
        // (background work) runs against the dispatch tasks.
        world.backgroundOrder = new Random(seed ^ 0x5DEECE66DL);
        this.faults = new Random(seed ^ 0x10ADFA11L);
        this.ledger = new ModelLedger(3, 1 + rnd.nextInt(6));
        this.config = ModelHarness.config(1 + rnd.nextInt(12), 1 + rnd.nextInt(8), GRACE_SECONDS, retentionSeconds,
                rnd.nextInt(4) == 0 ? 1 + rnd.nextInt(3) : 1000, rnd.nextInt(5) == 0 ? 0 : 1000 + rnd.nextInt(9000));
        this.floor = ledger.markDeleted();
        this.budget = rnd.nextInt(4) == 0 ? new WindowBudget(100 + rnd.nextInt(400)) : WindowBudget.unlimited();
        this.engine = newEngine(new SubscriptionStart(positions, null, false));
    }

    private SubscriptionEngine newEngine(SubscriptionStart start) {
        // A new engine has a recovery window only when it starts without saved positions.
        long window = start.windowNanos >= 0 ? start.windowNanos : GRACE_SECONDS * 1_000_000_000L;
        recoveryUntilNanos = start.recovering ? world.nowNanos + window : Math.min(recoveryUntilNanos, world.nowNanos);
        recoveryFloor = start.recovering && start.joinFloor != null
                ? PositionImpl.get(start.joinFloor.ledgerId(), start.joinFloor.entryId()) : null;
        return new SubscriptionEngine("persistent://model/ns/topic", "fleet", -1, ledger, config, budget, world,
                () -> world.nowNanos, start);
    }

    /** Runs {@code steps} random steps, a drain and the final checks; throws {@link AssertionError} on a violation. */
    void run(int steps) {
        for (int i = 0; i < steps; i++) {
            step();
            checkNoLoss();
        }
        drain();
        closeAndCheckLeaks();
    }

    // ----- the schedule -----

    private void step() {
        int r = rnd.nextInt(1000);
        if (r < 180) {
            int n = 1 + rnd.nextInt(3);
            for (int i = 0; i < n; i++) {
                note("publish " + ledger.publish(rnd.nextInt(5) == 0));
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
            consumeSome();
        } else if (r < 760) {
            join();
        } else if (r < 800) {
            leaveOne();
        } else if (r < 830) {
            redeliverOne();
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
            reload();
        } else if (r < 975) {
            connectionDies();
        } else {
            lastLeavesWhileAnotherJoins();
        }
    }

    private void note(String what) {
        trace.add(what);
        if (trace.size() > Integer.getInteger("broadcast.model.trace", 60)) {
            trace.poll();
        }
    }

    private Session randomSession() {
        return sessions.isEmpty() ? null : sessions.get(rnd.nextInt(sessions.size()));
    }

    // ----- consumers -----

    private void join() {
        List<String> free = new ArrayList<>();
        for (String n : NAMES) {
            Identity id = identities.get(n);
            if (id == null || !id.connected) {
                free.add(n);
            }
        }
        if (!free.isEmpty()) {
            join(free.get(rnd.nextInt(free.size())), rnd.nextBoolean() ? InitialPosition.Latest
                    : InitialPosition.Earliest);
        }
    }

    private void join(String name, InitialPosition initial) {
        Identity id = identities.computeIfAbsent(name, Identity::new);
        boolean recovering = world.nowNanos - recoveryUntilNanos < 0;
        PositionImpl freshStart = initial == InitialPosition.Earliest ? ledger.markDeleted()
                : recovering ? windowStart() : ledger.lastConfirmed();
        boolean mustResume = id.retainedFor(1_000);
        ModelHarness.Connection cnx = new ModelHarness.Connection(this);
        BroadcastConsumer bc;
        try {
            bc = engine.join(++consumerIds, name, cnx, initial, 0);
        } catch (SubscriptionFencedException e) {
            check(resetPending, "join refused although no reset runs: " + e.getMessage());
            note("join " + name + " refused (reset)");
            return;
        } catch (Exception e) {
            throw fail("join " + name + " failed: " + e);
        }
        check(!resetPending, "join of " + name + " accepted during a reset");
        check(!mustResume || bc.resumed, name + " rejoined within the grace period but did not resume its position");
        check(!bc.resumed || (!id.dropped && id.leftAtNanos >= 0), name + " resumed a position it never had");
        check(!bc.resumed || bc.cursor.acknowledged().compareTo(max(id.cumAcked, floor)) <= 0, name + " resumed at "
                + bc.cursor.acknowledged() + ", past what it acknowledged: " + id.cumAcked);
        if (!bc.resumed) {
            check(bc.cursor.acknowledged().equals(freshStart), name + " started at " + bc.cursor.acknowledged()
                    + ", expected " + freshStart);
            check(!id.unsavedAtCrash || world.nowNanos - id.protectedUntilNanos >= 0 || initial != id.initial
                    || freshStart.compareTo(max(id.cumAcked, floor)) <= 0, name + " joined after the last save"
                    + " before the crash and came back at " + freshStart + ", past what it acknowledged: "
                    + id.cumAcked);
            id.startAt(freshStart);
            id.initial = initial;
            id.freshAtSave = positions.saves;
        }
        id.connected = true;
        Session s = new Session(id, bc, cnx);
        sessions.add(s);
        byConsumer.put(bc, s);
        s.credit = QUEUE;
        engine.flow(bc, QUEUE);
        note("join " + name + " " + initial + (bc.resumed ? " resumed" : " at " + freshStart));
    }

    private void leave(Session s) {
        sessions.remove(s);
        byConsumer.remove(s.bc);
        s.id.connected = false;
        s.id.leftAtNanos = world.nowNanos;
        s.id.expiresAtNanos = world.nowNanos + retentionNanos;
        engine.leave(s.bc);
        // Stock PersistentSubscription.removeConsumer: no consumer left, so the cursor leaves the waiting list.
        if (engine.attachedCount() == 0) {
            ledger.removeWaitingCursor();
            engine.waitingCursorDropped();
        }
        note("leave " + s.id.name);
    }

    private void leaveOne() {
        Session s = randomSession();
        if (s != null) {
            leave(s);
        }
    }

    /** The last consumer leaves and another joins before the dispatch thread runs the leave. */
    private void lastLeavesWhileAnotherJoins() {
        while (sessions.size() > 1) {
            leave(sessions.get(0));
        }
        if (sessions.size() == 1) {
            note("last leaves while another joins");
            leave(sessions.get(0));
            join();
        }
    }

    private void connectionDies() {
        Session s = randomSession();
        if (s != null) {
            note("connection of " + s.id.name + " dies");
            s.cnx.rejecting = true;
            leave(s);
        }
    }

    private void consumeSome() {
        Session s = randomSession();
        if (s != null) {
            consume(s, 1 + rnd.nextInt(QUEUE), true);
        }
    }

    private void consume(Session s, int max, boolean mayMissAcks) {
        int taken = 0;
        while (taken < max && !s.inbox.isEmpty()) {
            PositionImpl p = s.inbox.poll();
            taken++;
            int mode = rnd.nextInt(10);
            if (mayMissAcks && mode == 0) {
                continue; // never acknowledged (until a redelivery sends it again)
            }
            ack(s, p, mode >= 8);
        }
        s.consumedSinceFlow += taken;
        if (s.consumedSinceFlow >= QUEUE / 2) {
            s.credit += s.consumedSinceFlow;
            engine.flow(s.bc, s.consumedSinceFlow);
            s.consumedSinceFlow = 0;
        }
        if (taken > 0) {
            note("consume " + taken + " by " + s.id.name);
        }
    }

    private void ack(Session s, PositionImpl p, boolean cumulative) {
        long droppedBefore = engine.counters().droppedAcks();
        AckResult result = engine.acknowledge(s.bc, p.getLedgerId(), p.getEntryId(), cumulative);
        check(result != AckResult.NOT_SENT, s.id.name + ": ack of " + p + " it was sent was refused");
        // pulsar_broadcast_dropped_acks_total counts exactly the acks not kept for want of ranges
        check(engine.counters().droppedAcks() - droppedBefore == (result == AckResult.DROPPED ? 1 : 0),
                s.id.name + ": ack of " + p + " was " + result + ", the dropped-acks counter moved by "
                        + (engine.counters().droppedAcks() - droppedBefore));
        s.id.ack(p, cumulative);
    }

    private void redeliverOne() {
        Session s = randomSession();
        if (s != null) {
            redeliver(s);
        }
    }

    private void redeliver(Session s) {
        int cleared = s.inbox.size();
        s.inbox.clear();
        s.lastDelivered = null;
        s.epoch++;
        engine.redeliver(s.bc, s.epoch);
        s.credit += cleared + s.consumedSinceFlow;
        engine.flow(s.bc, cleared + s.consumedSinceFlow);
        s.consumedSinceFlow = 0;
        note("redeliver " + s.id.name);
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
            for (Identity id : identities.values()) {
                id.floorAt(to);
            }
            note("operator skips to " + to);
        }
    }

    private void resetStep() {
        if (!resetPending) {
            resetPending = true;
            engine.beginReset();
            markDeletedAtResetStart = ledger.markDeleted();
            note("reset begins");
            while (!sessions.isEmpty()) {
                leave(sessions.get(0));
            }
            return;
        }
        List<PositionImpl> all = ledger.between(PositionImpl.get(0, -1), ledger.lastConfirmed());
        PositionImpl to = all.isEmpty() || rnd.nextInt(4) == 0 ? PositionImpl.get(3, -1)
                : all.get(rnd.nextInt(all.size()));
        ledger.resetTo(to);
        engine.cursorReset();
        engine.endReset();
        resetPending = false;
        floor = to;
        recoveryUntilNanos = world.nowNanos + GRACE_SECONDS * 1_000_000_000L;
        recoveryFloor = null;
        // Every retained position starts again at the reset position, retained from now. Saved expiry times are
        // whole seconds, so a position restored from a save may be kept up to a second longer than the model's
        // retention: within that second the engine's own save at the reset tells (seed 3235706080123355).
        Set<String> keptByEngine = positions.savedNames();
        for (Identity id : identities.values()) {
            if (id.retained() || (id.retainedFor(-1_000) && keptByEngine.contains(id.name))) {
                id.startAt(to);
                id.leftAtNanos = world.nowNanos;
                id.expiresAtNanos = world.nowNanos + retentionNanos;
            } else {
                id.dropped = true;
            }
        }
        note("reset to " + to);
    }

    /**
     * The topic moves: gracefully (the positions are saved on close) or by a crash (the new owner loads the last
     * periodic save). Like the installer, the new engine restores saved positions, or opens the recovery window when
     * there are none (saving off, or nothing saved yet).
     */
    private void reload() {
        if (resetPending) {
            return;
        }
        boolean crash = rnd.nextBoolean();
        // A graceful close that fails half-way (stock resumeAfterFence): the subscription resumes on this broker.
        boolean closeFails = !crash && config.positionSyncIntervalMs() > 0 && faults.nextInt(4) == 0;
        note(crash ? "crash" : closeFails ? "close fails half-way" : "reload");
        if (crash) {
            engine.deleting(true); // a crashed broker saves nothing more
        }
        engine.close();
        while (!sessions.isEmpty()) {
            leave(sessions.get(0));
        }
        engine.closeFanOut();
        while (world.runOne() || ledger.completeOne()) {
            // let the old engine finish and release what it holds
        }
        if (closeFails) {
            // The positions captured at the close come back (the close's save holds the same capture; read before
            // the reopen's own save, whose expiry times are rounded to whole seconds), with the recovery window at
            // the mark-delete position for anything since.
            positionsRestored(false, false, positions.saved != null && !positions.saved.isEmpty());
            engine.reopen();
            recoveryUntilNanos = world.nowNanos + GRACE_SECONDS * 1_000_000_000L;
            recoveryFloor = null;
            return;
        }
        ledger.reload();
        // The new owner starts as the installer starts it (StartDecision); one load in four fails (the metadata store
        // did not answer), and the new owner then has no saved positions at all.
        boolean loadFails = config.positionSyncIntervalMs() > 0 && faults.nextInt(4) == 0;
        positions.failNextLoad = loadFails;
        SubscriptionStart start = StartDecision.resume(positions, config, world::wallMillis, () -> true,
                "[model]").join();
        positions.failNextLoad = false;
        if (loadFails) {
            note("its load failed");
        }
        // What the new owner must restore, judged apart from the decision under test.
        positionsRestored(crash, loadFails, config.positionSyncIntervalMs() > 0 && !loadFails
                && positions.saved != null && !positions.saved.isEmpty());
        engine = newEngine(start);
    }

    /**
     * The reference after a load (or a reopen): names the last save holds come back ({@code restore}); others lose
     * their position, and those that had one at a crash or a failed load stay protected for the recovery window.
     */
    private void positionsRestored(boolean crash, boolean loadFails, boolean restore) {
        Set<String> saved = restore ? positions.savedNames() : Set.of();
        PositionImpl markDeleted = ledger.markDeleted();
        for (Identity id : identities.values()) {
            boolean wasRetained = id.retained();
            // Unsaved at a crash (or not restored by a load that failed), or still so at a graceful move inside the
            // window a crash opened.
            boolean unsavedNow = (crash || loadFails) && wasRetained && !saved.contains(id.name);
            boolean stillUnsaved = id.unsavedAtCrash && world.nowNanos - id.protectedUntilNanos < 0
                    && !saved.contains(id.name);
            id.unsavedAtCrash = unsavedNow || stillUnsaved;
            if (unsavedNow) {
                id.protectedUntilNanos = world.nowNanos + GRACE_SECONDS * 1_000_000_000L;
            }
            id.dropped |= !saved.contains(id.name);
            if (saved.contains(id.name)) {
                if (!wasRetained || id.freshAtSave == positions.saves) {
                    // Its retention ran out before the crash, but the last save still held it: the new owner brings
                    // the saved position back, no lower than the mark-delete (seed 3619332101975234). The same when
                    // the name started afresh after its retention ran out and no save followed: the last save holds
                    // its earlier position, which it had acknowledged (seed 3043750001251942).
                    adoptSaved(id, markDeleted);
                }
                // A restored position keeps the expiry the save recorded, but at least the reconnect grace from the
                // load; one saved while its consumer was connected is retained for the retention from the load, also
                // at least the grace (a retention shorter than the grace, 0 included).
                id.leftAtNanos = Math.max(id.leftAtNanos, world.nowNanos);
                long untilMs = positions.retainedUntilMillis(id.name);
                long grace = GRACE_SECONDS * 1_000_000_000L;
                id.expiresAtNanos = world.nowNanos + Math.max(grace, untilMs == 0 ? retentionNanos
                        : (untilMs - world.wallMillis()) * 1_000_000L);
            }
        }
    }

    /** Where a {@code Latest} join starts in the recovery window: the saved join floor, within mark-delete..tail. */
    private PositionImpl windowStart() {
        PositionImpl markDeleted = ledger.markDeleted();
        if (recoveryFloor == null || recoveryFloor.compareTo(markDeleted) <= 0) {
            return markDeleted;
        }
        return recoveryFloor.compareTo(ledger.lastConfirmed()) < 0 ? recoveryFloor : ledger.lastConfirmed();
    }

    /** {@code id} takes the saved position of its name as the engine restores it: at or above {@code floor}. */
    private void adoptSaved(Identity id, PositionImpl floor) {
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

    // ----- what connections see -----

    @Override
    public void delivered(BroadcastConsumer consumer, WindowEntry entry, long epoch) {
        Session s = byConsumer.get(consumer);
        if (s == null) {
            return; // the connection is gone
        }
        PositionImpl p = entry.position;
        check(--s.credit >= 0, s.id.name + " was sent " + p + " without a permit");
        if (epoch < s.epoch) {
            s.consumedSinceFlow++; // sent before the redelivery: the client drops it and returns the permit
            return;
        }
        check(s.lastDelivered == null || p.compareTo(s.lastDelivered) > 0, s.id.name + " received " + p + " after "
                + s.lastDelivered);
        PositionImpl lower = max(max(s.id.start, s.id.cumAcked), floor);
        if (s.lastDelivered != null) {
            lower = max(lower, s.lastDelivered);
        }
        for (PositionImpl q : ledger.between(lower, p)) {
            check(q.equals(p) || s.id.acked.contains(q), s.id.name + " received " + p + " but never " + q
                    + " (start " + s.id.start + ", acked " + s.id.cumAcked + ", floor " + floor + ", last delivered "
                    + s.lastDelivered + ", engine " + s.bc + ")");
        }
        s.lastDelivered = p;
        s.inbox.add(p);
    }

    @Override
    public void endOfTopic(long consumerId) {
        throw fail("end of topic on a topic that was never terminated");
    }

    // ----- checks -----

    private void checkNoLoss() {
        PositionImpl markDeleted = ledger.markDeleted();
        if (resetPending) {
            check(markDeleted.equals(markDeletedAtResetStart), "the mark-delete moved during a reset");
        }
        for (Identity id : identities.values()) {
            if (id.retained()) {
                check(markDeleted.compareTo(max(id.cumAcked, floor)) <= 0, "the mark-delete position "
                        + markDeleted + " passed " + id.name + "'s acknowledged position " + id.cumAcked
                        + (id.connected ? " (connected)" : " (retained)"));
            }
        }
    }

    /** No more faults; consumers take and acknowledge everything; time passes until nothing is left to do. */
    private void drain() {
        note("drain");
        if (resetPending) {
            resetStep();
        }
        ledger.failNextReads = 0;
        if (sessions.isEmpty()) {
            join(NAMES[0], InitialPosition.Earliest);
        }
        for (Session s : new ArrayList<>(sessions)) {
            redeliver(s); // acks dropped past the range bound are sent again
        }
        int idleRounds = 0;
        for (int round = 0; round < 2_000; round++) {
            boolean busy = false;
            while (world.runOne() || ledger.completeOne()) {
                busy = true;
                checkNoLoss();
            }
            for (Session s : sessions) {
                if (!s.inbox.isEmpty()) {
                    busy = true;
                    consume(s, Integer.MAX_VALUE, false);
                }
                if (s.consumedSinceFlow > 0) {
                    s.credit += s.consumedSinceFlow;
                    engine.flow(s.bc, s.consumedSinceFlow);
                    s.consumedSinceFlow = 0;
                    busy = true;
                }
            }
            if (!busy) {
                if (done()) {
                    return;
                }
                if (++idleRounds % 10 == 0) {
                    // An ack timeout: what the consumer acknowledged but the broker did not record (past the range
                    // bound) is sent again, and acknowledged again.
                    for (Session s : new ArrayList<>(sessions)) {
                        redeliver(s);
                    }
                }
                long next = world.nextScheduledInMs();
                world.advance(next >= 0 ? Math.max(next, 1) : 1_000);
                world.post(engine::sync);
            }
        }
        throw fail("not drained: " + stuck());
    }

    private boolean done() {
        PositionImpl end = ledger.lastConfirmed();
        for (Session s : sessions) {
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
        for (Session s : sessions) {
            sb.append("; ").append(s.id.name).append(" acked ").append(s.id.cumAcked).append(" engine ")
                    .append(s.bc).append(" state ").append(s.bc.state).append(" ranges ")
                    .append(s.bc.cursor.<String>save((acked, ranges) -> java.util.Arrays.toString(ranges)));
        }
        return sb.toString();
    }

    private void closeAndCheckLeaks() {
        engine.close();
        while (!sessions.isEmpty()) {
            leave(sessions.get(0));
        }
        engine.closeFanOut();
        while (world.runOne() || ledger.completeOne()) {
            // finish
        }
        check(ledger.unreleased().isEmpty(), ledger.unreleased().size() + " entry buffers were never released");
        check(budget.used() == 0, budget.used() + " bytes of the window budget were never given back");
    }

    private static PositionImpl max(PositionImpl a, PositionImpl b) {
        return a.compareTo(b) >= 0 ? a : b;
    }

    private void check(boolean ok, String what) {
        if (!ok) {
            throw fail(what);
        }
    }

    private AssertionError fail(String what) {
        String retention = retentionNanos == GRACE_SECONDS * 1_000_000_000L ? ""
                : " (retention " + retentionNanos / 1_000_000_000L + " s: -Dbroadcast.model.retentionSeconds)";
        return new AssertionError("seed " + seed + retention + ": " + what + "\n  engine: " + engine
                + "\n  storage: mark-delete " + ledger.markDeleted() + ", read position " + ledger.readPosition()
                + ", last " + ledger.lastConfirmed() + "\n  last steps: " + String.join(" | ", trace));
    }
}
