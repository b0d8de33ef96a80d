package io.github.pulsarbroadcast.broadcast.dispatch;

import java.util.ArrayList;
import java.util.List;

/**
 * Batches the refills of consumers that fell behind the tail (issue 12, "no cliff"). A consumer behind the tail is
 * served on its own, from the window or a catch-up read; when it comes back with a refill of half its receiver queue
 * (the stock clients refill at half), serving it at once makes a pass of a few messages for one consumer, and past
 * the machine's sustainable rate such small passes cost more per message than the broker saves by serving them early
 * (design.md, "Overload"). So a consumer behind the tail whose permits are at most half of its largest flow (its
 * receiver queue) is held back until either its permits pass that half (its next refill: the client has drained what
 * it had) or the hold ends, one to two {@code broadcastBehindRefillWaitMs} later, whichever comes first. A consumer at
 * the tail is never held: the tail read serves everyone there in one pass anyway.
 *
 * <p>Holds end in generations: every {@code waitMs} the holds of the generation before the last are ended and the
 * current one becomes the last, so a hold lasts between one and two periods and nothing needs a clock or a timer per
 * consumer. A consumer carries the generation of its hold ({@link BroadcastConsumer#heldIn}); a list entry whose
 * consumer was served in the meantime, or held again in a later generation, is skipped.
 *
 * <p>Threading: confined to the subscription's dispatch thread, like {@link FanOut}; every field is owned by it.
 */
final class RefillBatches {

    /** {@link BroadcastConsumer#heldIn}: not held. */
    static final long NOT_HELD = 0;
    /** {@link BroadcastConsumer#heldIn}: its hold ended; the next placement serves it whatever its permits. */
    static final long HOLD_ENDED = -1;

    private final FanOut fanOut;
    private final long waitMs;
    private List<BroadcastConsumer> current = new ArrayList<>();
    private List<BroadcastConsumer> last = new ArrayList<>();
    /** The generation that holds started now belong to; starts at 1 (0 and -1 are markers). */
    private long generation = 1;
    private boolean tickScheduled;

    RefillBatches(FanOut fanOut, long waitMs) {
        this.fanOut = fanOut;
        this.waitMs = waitMs;
    }

    /**
     * Decides, for a consumer behind the tail with permits, whether it waits for more permits; starts its hold when
     * it does.
     *
     * @return true when the consumer is to stay idle for now
     */
    boolean hold(BroadcastConsumer bc) {
        if (waitMs <= 0 || bc.heldIn == HOLD_ENDED || bc.cursor.permits() > bc.largestFlow / 2) {
            bc.heldIn = NOT_HELD;
            return false;
        }
        if (bc.heldIn == NOT_HELD) {
            bc.heldIn = generation;
            current.add(bc);
            fanOut.owner.counters().refillsHeld++;
            scheduleTick();
        }
        return true;
    }

    /** Forgets every hold (the fan-out closed: every consumer has left). */
    void clear() {
        forget(current);
        forget(last);
    }

    private static void forget(List<BroadcastConsumer> held) {
        for (int i = 0; i < held.size(); i++) {
            held.get(i).heldIn = NOT_HELD;
        }
        held.clear();
    }

    private void scheduleTick() {
        if (!tickScheduled) {
            tickScheduled = true;
            fanOut.owner.schedule(this::tick, waitMs);
        }
    }

    /** Ends the holds of the generation before the last one, and starts a new generation. */
    private void tick() {
        tickScheduled = false;
        long ending = generation - 1;
        List<BroadcastConsumer> ended = last;
        last = current;
        current = ended;
        generation++;
        for (int i = 0; i < ended.size(); i++) {
            BroadcastConsumer bc = ended.get(i);
            if (bc.heldIn != ending) {
                continue; // served since, or held again in a later generation
            }
            if (bc.state == BroadcastConsumer.State.IDLE && !bc.isRemoved()) {
                bc.heldIn = HOLD_ENDED;
                fanOut.place(bc);
            } else {
                bc.heldIn = NOT_HELD;
            }
        }
        ended.clear();
        if (!last.isEmpty()) {
            scheduleTick();
        }
    }
}
