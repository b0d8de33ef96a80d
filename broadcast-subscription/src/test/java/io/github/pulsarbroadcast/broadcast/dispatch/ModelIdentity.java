package io.github.pulsarbroadcast.broadcast.dispatch;

import java.util.HashSet;
import java.util.Set;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;

/**
 * A consumer name in {@link DispatchModel}'s reference: what its client was sent and acknowledged, as the client sees
 * it, and whether the broker must still hold its position (connected, retained since it left, restored by a load).
 *
 * <p>Threading: single-threaded (the model test's thread).
 */
final class ModelIdentity {

    private final ModelHarness world;
    private final ModelLedger ledger;
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
    /**
     * The broker's acknowledged position of this name when it last left, and the model's rewinds then: resumed with
     * no crash or reset since, it must come back at that position or past it (an operator's skip, markers passed).
     */
    PositionImpl ackedAtLeave;
    int rewindsAtLeave;
    /**
     * What the broker recorded as acknowledged by this name (its ack answered ADVANCED, RECORDED or DUPLICATE, not
     * DROPPED): the cumulative position, or null, and single positions. It must never be sent again, in any run,
     * until a crash or a reset (which may move positions back) or a fresh start forgets it.
     */
    PositionImpl confirmedCum;
    final Set<PositionImpl> confirmed = new HashSet<>();
    /**
     * Its acknowledged position just before the last reset-cursor whose save failed (null: none, or it had none): a
     * crash before the next save that works may undo that reset, and bring it back as far as this.
     */
    PositionImpl ackedBeforeUnsavedReset;

    /** The name {@code name}, on the model's clock ({@code world}) and ledger. */
    ModelIdentity(String name, ModelHarness world, ModelLedger ledger) {
        this.name = name;
        this.world = world;
        this.ledger = ledger;
    }

    /** See {@link #confirmed}. */
    void confirm(PositionImpl p, boolean cumulative) {
        if (!cumulative) {
            confirmed.add(p);
        } else if (confirmedCum == null || p.compareTo(confirmedCum) > 0) {
            confirmedCum = p;
        }
    }

    boolean isConfirmed(PositionImpl p) {
        return (confirmedCum != null && p.compareTo(confirmedCum) <= 0) || confirmed.contains(p);
    }

    void forgetConfirmed() {
        confirmedCum = null;
        confirmed.clear();
    }

    void startAt(PositionImpl position) {
        forgetConfirmed();
        freshAtSave = -1;
        unsavedAtCrash = false;
        start = position;
        cumAcked = position;
        acked.clear();
        dropped = false;
        absorb();
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
        absorb();
    }

    /**
     * Moves the acknowledged position over what follows it that was acknowledged on its own, and over markers (no
     * consumer gets them: the broker counts them acknowledged when the consumer reaches them).
     */
    void absorb() {
        if (cumAcked == null) {
            return; // never joined
        }
        for (PositionImpl n = ledger.next(cumAcked); acked.remove(n) || ledger.transactions.isWithheld(n);
                n = ledger.next(cumAcked)) {
            cumAcked = n;
        }
        acked.removeIf(x -> x.compareTo(cumAcked) <= 0);
    }
}
