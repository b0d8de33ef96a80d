package io.github.pulsarbroadcast.broadcast.dispatch;

import io.github.pulsarbroadcast.broadcast.positions.JoinFloor;
import io.github.pulsarbroadcast.broadcast.positions.PositionStore;
import io.github.pulsarbroadcast.broadcast.positions.SavedPosition;
import java.util.List;

/**
 * How a broadcast subscription starts on this broker: its position store, the positions saved there (null when
 * none could be read), and whether consumers attached before may be on their way back without a saved position, in
 * which case joins start no later than where such a consumer may have started, for
 * {@code broadcastReconnectGraceSeconds} (the recovery window; duplicates, never loss): at the saved
 * {@link JoinFloor} when the snapshot has one (a {@code Latest} join; {@code Earliest} still starts at the mark-delete
 * position), otherwise at the mark-delete position.
 *
 * <p>Threading: immutable.
 */
final class SubscriptionStart {

    final PositionStore store;
    final List<SavedPosition> restored;
    final boolean recovering;
    /** Where {@code Latest} joins start during the recovery window; null: at the mark-delete position. */
    final JoinFloor joinFloor;
    /** How long the recovery window lasts; negative: {@code broadcastReconnectGraceSeconds}. */
    final long windowNanos;

    SubscriptionStart(PositionStore store, List<SavedPosition> restored, boolean recovering) {
        this(store, restored, recovering, null);
    }

    SubscriptionStart(PositionStore store, List<SavedPosition> restored, boolean recovering, JoinFloor joinFloor) {
        this(store, restored, recovering, joinFloor, -1);
    }

    SubscriptionStart(PositionStore store, List<SavedPosition> restored, boolean recovering, JoinFloor joinFloor,
                      long windowNanos) {
        this.store = store;
        this.restored = restored;
        this.recovering = recovering;
        this.joinFloor = joinFloor;
        this.windowNanos = windowNanos;
    }

    /**
     * What is left, at {@code wallNowMillis}, of the recovery window the previous owner closed the subscription in
     * (the end its last save's floor carries), at most {@code graceNanos} (a clock behind the previous owner's, or a
     * damaged value, must not hold the mark-delete position still for longer than a whole window): 0 when it has
     * ended, -1 when that save was not made inside one.
     */
    static long windowLeftNanos(JoinFloor savedFloor, long wallNowMillis, long graceNanos) {
        if (savedFloor == null || savedFloor.windowEndMillis() == 0) {
            return -1;
        }
        long leftMillis = Math.max(0, savedFloor.windowEndMillis() - wallNowMillis);
        return leftMillis >= graceNanos / 1_000_000 ? graceNanos : leftMillis * 1_000_000;
    }
}
