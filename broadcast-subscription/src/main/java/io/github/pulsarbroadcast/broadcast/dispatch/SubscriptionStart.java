package io.github.pulsarbroadcast.broadcast.dispatch;

import io.github.pulsarbroadcast.broadcast.positions.PositionStore;
import io.github.pulsarbroadcast.broadcast.positions.SavedPosition;
import java.util.List;

/**
 * How a broadcast subscription starts on this broker: its position store, the positions saved there (null when
 * none could be read), and whether consumers attached before may be on their way back without a saved position, in
 * which case joins start at the mark-delete position for {@code broadcastReconnectGraceSeconds} (the recovery
 * window; duplicates, never loss).
 *
 * <p>Threading: immutable.
 */
final class SubscriptionStart {

    final PositionStore store;
    final List<SavedPosition> restored;
    final boolean recovering;

    SubscriptionStart(PositionStore store, List<SavedPosition> restored, boolean recovering) {
        this.store = store;
        this.restored = restored;
        this.recovering = recovering;
    }
}
