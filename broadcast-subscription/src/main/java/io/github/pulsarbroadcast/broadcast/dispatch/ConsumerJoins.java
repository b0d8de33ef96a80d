package io.github.pulsarbroadcast.broadcast.dispatch;

import io.github.pulsarbroadcast.broadcast.cursor.CursorRules;
import io.github.pulsarbroadcast.broadcast.cursor.VirtualCursor;
import java.util.function.BooleanSupplier;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.broker.service.BrokerServiceException;
import org.apache.pulsar.broker.service.BrokerServiceException.SubscriptionFencedException;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;

/**
 * Who may join a broadcast subscription, and where a consumer starts: at the position retained under its name if
 * there is one, otherwise at the tail ({@code Latest}; during the recovery window after a load, reset or reopen, where
 * the {@link RecoveryWindow} says) or at the subscription's mark-delete position ({@code Earliest}). Joins are refused
 * (stock's retriable {@link SubscriptionFencedException}) while the subscription closes or a reset runs, and joins of
 * names it does not hold while its store may hold a snapshot that would start them past what they were sent after a
 * crash ({@link PositionSync#newNamesUnsafe}: a failed close's save, or a join floor from before a reset).
 *
 * <p>Threading: any thread (stock subscribe threads); holds no mutable state of its own (the parts it reads are
 * thread-safe: {@link RetainedCursors} under its lock, the others volatile or atomic).
 */
final class ConsumerJoins {

    private final String name;
    private final RetainedCursors cursors;
    private final CursorRules rules;
    private final SubscriptionStorage storage;
    private final RecoveryWindow recovery;
    private final PositionSync positions;
    private final ResetGate resets;
    private final BooleanSupplier closed;

    ConsumerJoins(String name, RetainedCursors cursors, CursorRules rules, SubscriptionStorage storage,
                  RecoveryWindow recovery, PositionSync positions, ResetGate resets, BooleanSupplier closed) {
        this.name = name;
        this.cursors = cursors;
        this.rules = rules;
        this.storage = storage;
        this.recovery = recovery;
        this.positions = positions;
        this.resets = resets;
        this.closed = closed;
    }

    /** Attaches a consumer of {@code engine} where it starts, or refuses it. */
    BroadcastConsumer attach(SubscriptionEngine engine, long consumerId, String consumerName, ConsumerConnection cnx,
                             InitialPosition initialPosition, long epoch) throws BrokerServiceException {
        if (closed.getAsBoolean()) {
            throw new SubscriptionFencedException("Broadcast subscription " + name + " is closing");
        }
        if (resets.underWay()) {
            throw new SubscriptionFencedException("Broadcast subscription " + name + " is being reset");
        }
        boolean brokerEntryMetadata = cnx.receivesBrokerEntryMetadata();
        boolean newNamesRefused = positions.newNamesUnsafe() && !consumerName.isEmpty();
        try {
            return cursors.attach(consumerName, () -> startCursor(initialPosition, newNamesRefused),
                    (cursor, resumed) -> new BroadcastConsumer(engine, consumerId, consumerName, cnx, cursor,
                            brokerEntryMetadata, epoch, resumed));
        } catch (NewNameRefused e) {
            throw new SubscriptionFencedException("Broadcast subscription " + name + " has not saved its consumers'"
                    + " positions since a close that failed or a reset-cursor: consumer " + consumerName
                    + " (new to it) is refused until a save works; retry");
        }
    }

    /**
     * A consumer name this subscription does not hold is refused while the store may hold a snapshot that would start
     * it past what it was sent after a crash ({@link PositionSync#newNamesUnsafe}): the save on close of a close that
     * failed, after which the next owner would take it for a consumer it knows nothing of and start it at the tail
     * (found by the dispatch model once saves could fail, forty-fourth session: seed 20261207788097); or a join floor
     * from before a reset (forty-fifth session: seed 20261211795669).
     */
    private static final class NewNameRefused extends RuntimeException {
        NewNameRefused() {
            super(null, null, false, false);
        }
    }

    private VirtualCursor startCursor(InitialPosition initialPosition, boolean refused) {
        if (refused) {
            throw new NewNameRefused();
        }
        PositionImpl start = initialPosition == InitialPosition.Earliest ? storage.markDeleted()
                : recovery.latestStart();
        return new VirtualCursor(start, rules);
    }
}
