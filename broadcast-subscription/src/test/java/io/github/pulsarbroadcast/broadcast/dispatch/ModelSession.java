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

    ModelSession(ModelIdentity id, BroadcastConsumer bc, ModelHarness.Connection cnx) {
        this.id = id;
        this.bc = bc;
        this.cnx = cnx;
    }
}
