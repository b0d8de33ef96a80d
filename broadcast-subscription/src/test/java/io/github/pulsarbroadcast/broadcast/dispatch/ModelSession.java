package io.github.pulsarbroadcast.broadcast.dispatch;

import java.util.ArrayDeque;
import org.apache.bookkeeper.mledger.impl.PositionImpl;

/**
 * One connection of a consumer in {@link DispatchModel} (from join to leave): what it was sent and has not consumed
 * yet, the permits it gave, the redelivery epoch it is in.
 *
 * <p>Threading: single-threaded (the model test's thread).
 */
final class ModelSession {

    final ModelIdentity id;
    final BroadcastConsumer bc;
    final ModelHarness.Connection cnx;
    final ArrayDeque<PositionImpl> inbox = new ArrayDeque<>();
    PositionImpl lastDelivered;
    int credit;
    int consumedSinceFlow;
    long epoch;
    /**
     * Whether something this consumer was sent is not acknowledged on the broker's side: it left an ack out, acked
     * only the entries before one, or the broker dropped its ack (past the range bound). Only then does a client get
     * it again (its ack timeout or negative ack: a redelivery); the drain redelivers to no one else, so that a
     * consumer the broker left waiting with permits is found stuck instead of rescued by a redelivery.
     */
    boolean owesRedelivery;

    ModelSession(ModelIdentity id, BroadcastConsumer bc, ModelHarness.Connection cnx) {
        this.id = id;
        this.bc = bc;
        this.cnx = cnx;
    }
}
