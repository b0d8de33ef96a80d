package io.github.pulsarbroadcast.broadcast.dispatch;

import io.github.pulsarbroadcast.broadcast.positions.JoinFloor;
import java.util.function.LongSupplier;
import org.apache.bookkeeper.mledger.impl.PositionImpl;

/**
 * A broadcast subscription's recovery window: for {@code broadcastReconnectGraceSeconds} after the subscription was
 * loaded without a save made on close (a crash, or positions that could not be read), reset or reopened, a name the
 * subscription does not know may be a consumer that was attached and whose position was not saved. Such a consumer
 * must find its messages, so a {@code Latest} join starts no later than where it may have started: at the saved
 * {@link JoinFloor} when the window was opened with one (after a crash: the tail as of the last save, or that save's
 * own window start), otherwise at the mark-delete position; always within mark-delete..tail. Outside the window a
 * {@code Latest} join starts at the tail. ({@code Earliest} joins start at the mark-delete position either way.)
 * A subscription closed inside the window saves the window's end with its floor ({@link #joinFloor(boolean, long)});
 * the next owner opens the window for what is left of it, at most a whole grace period.
 *
 * <p>Threading: any thread; the window is one immutable state behind a volatile field.
 */
final class RecoveryWindow {

    private static final class State {
        final long untilNanos;
        /** Where {@code Latest} joins start while open; null: the mark-delete position. */
        final PositionImpl floor;
        /**
         * Whether a name it does not know may be a consumer that was attached (opened by a load without a save made
         * on close, or a reopen), rather than only by a reset, which restarted every position it knew.
         */
        final boolean unknownAttached;

        State(long untilNanos, PositionImpl floor, boolean unknownAttached) {
            this.untilNanos = untilNanos;
            this.floor = floor;
            this.unknownAttached = unknownAttached;
        }
    }

    private final SubscriptionStorage storage;
    private final LongSupplier nanoClock;
    private final long lengthNanos;
    private volatile State state;

    RecoveryWindow(SubscriptionStorage storage, LongSupplier nanoClock, long lengthNanos) {
        this.storage = storage;
        this.nanoClock = nanoClock;
        this.lengthNanos = lengthNanos;
        this.state = new State(nanoClock.getAsLong(), null, false); // closed
    }

    /** Opens the window for its length from now; {@code floor}: where {@code Latest} joins start in it, or null. */
    void open(JoinFloor floor) {
        state = new State(nanoClock.getAsLong() + lengthNanos,
                floor == null ? null : PositionImpl.get(floor.ledgerId(), floor.entryId()), true);
    }

    /**
     * Opens the window for {@code nanos} from now (what is left of one the previous owner closed in: opened by a
     * reset-cursor alone when its {@code floor} says so, {@link JoinFloor#windowAfterReset}).
     */
    void open(JoinFloor floor, long nanos) {
        state = new State(nanoClock.getAsLong() + nanos,
                floor == null ? null : PositionImpl.get(floor.ledgerId(), floor.entryId()),
                floor == null || !floor.windowAfterReset());
    }

    /**
     * Opens the window for its length from now after a reset-cursor, which restarted every position the subscription
     * knew: a name it does not know may be a consumer that was attached only if a window still open says so, or if
     * the positions of the consumers the reset disconnected may be forgotten before the window ends
     * ({@code forgetsDuringIt}: a retention shorter than the window).
     */
    void openAfterReset(boolean forgetsDuringIt) {
        State s = state;
        state = new State(nanoClock.getAsLong() + lengthNanos, null,
                forgetsDuringIt || isOpen(s) && s.unknownAttached);
    }

    boolean isOpen() {
        return isOpen(state);
    }

    /**
     * Whether the window is open and a name the subscription does not know may be a consumer that was attached (the
     * subscription was loaded without a save made on close, or reopened, and its window has not ended).
     */
    boolean mayHaveUnknownAttached() {
        State s = state;
        return isOpen(s) && s.unknownAttached;
    }

    private boolean isOpen(State s) {
        return nanoClock.getAsLong() - s.untilNanos < 0;
    }

    /** Where a {@code Latest} join starts now. */
    PositionImpl latestStart() {
        return latestStart(state);
    }

    private PositionImpl latestStart(State s) {
        if (!isOpen(s)) {
            return storage.lastConfirmed();
        }
        PositionImpl markDeleted = storage.markDeleted();
        if (s.floor == null || s.floor.compareTo(markDeleted) <= 0) {
            return markDeleted;
        }
        PositionImpl tail = storage.lastConfirmed();
        return s.floor.compareTo(tail) < 0 ? s.floor : tail;
    }

    /**
     * The join floor of a snapshot captured right after this call: a consumer missing from that capture joins after
     * it, so it starts here or later (or at the mark-delete position with {@code Earliest}, which it asks for again
     * when it comes back).
     */
    JoinFloor joinFloor() {
        return joinFloor(false, 0);
    }

    /**
     * As {@link #joinFloor()}; for the save made when the subscription closes ({@code closing}) inside the window,
     * with the window's end on the wall clock ({@code wallNowMillis} is now on it), rounded up to the millisecond, so
     * that the next owner keeps the window until then. The window is read once.
     */
    JoinFloor joinFloor(boolean closing, long wallNowMillis) {
        State s = state;
        PositionImpl p = latestStart(s);
        long leftNanos = s.untilNanos - nanoClock.getAsLong();
        long end = closing && leftNanos > 0 ? wallNowMillis + (leftNanos + 999_999) / 1_000_000 : 0;
        return new JoinFloor(p.getLedgerId(), p.getEntryId(), end, !s.unknownAttached);
    }
}
