package io.github.pulsarbroadcast.broadcast.dispatch;

import io.netty.util.internal.PlatformDependent;
import java.util.Queue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * Flow commands gathered between dispatch turns: each consumer's new permits are added to a counter of its own and
 * the consumer is queued once; one task on the dispatch thread applies everything gathered, instead of one task per
 * flow command (with a receiver queue of 10 refilled at half, a flow every 5 messages per consumer: 20,000 tasks a
 * second at 100,000 deliveries a second, each a queue insertion and often a thread wake-up).
 *
 * <p>Order: permits that arrive before a task for the same consumer is posted are applied before that task runs
 * (the gathering task is queued before it, or runs already and sees them). Permits that arrive later may be applied
 * before it; for the two tasks where that matters, the consumer's join (a resumed position's permits are reset
 * there) and its redelivery (messages sent before it carry the old epoch), the consumer is <em>held</em>
 * ({@link #hold}): the gathering task leaves its permits, and the held task takes them when it ends
 * ({@link #release}). Permits are additive, so applying them later than they arrived never loses any.
 *
 * <p>Contract: every permit passed to {@link #add} is handed to the applier exactly once, by {@link #drain} or
 * {@link #release}, while the caller posts a drain whenever {@link #add} says so ({@code GatheredFlowsTest}).
 *
 * <p>Threading: {@link #add} and {@link #hold} from any thread (event loops); {@link #drain} and {@link #release}
 * on the dispatch thread only. The queue is multi-producer single-consumer; {@code scheduled} is atomic. The
 * per-consumer counters are {@link BroadcastConsumer#flowed} (atomic through an updater: permits gathered and not
 * yet applied) and {@link BroadcastConsumer#flowHolds} (atomic: held tasks queued).
 */
final class GatheredFlows {

    /** What is done with a consumer's gathered permits on the dispatch thread. */
    interface Applier {
        void flow(BroadcastConsumer bc, int permits);
    }

    private static final AtomicIntegerFieldUpdater<BroadcastConsumer> FLOWED =
            AtomicIntegerFieldUpdater.newUpdater(BroadcastConsumer.class, "flowed");
    private static final AtomicIntegerFieldUpdater<BroadcastConsumer> HOLDS =
            AtomicIntegerFieldUpdater.newUpdater(BroadcastConsumer.class, "flowHolds");

    /** Consumers whose counter went from zero to positive, each at most once at a time. */
    private final Queue<BroadcastConsumer> queue = PlatformDependent.newMpscQueue();
    /** Whether a drain is posted and has not started yet. */
    private final AtomicBoolean scheduled = new AtomicBoolean();

    /**
     * Gathers {@code permits} (positive) of {@code bc}; any thread.
     *
     * @return true when the caller must post a {@link #drain} to the dispatch thread
     */
    boolean add(BroadcastConsumer bc, int permits) {
        if (FLOWED.getAndAdd(bc, permits) == 0) {
            queue.offer(bc);
        }
        // Queued first, then the flag: a drain that reset the flag before this offer was seen will be followed by
        // the one this caller posts; a drain that resets it afterwards polls the queue after the reset.
        return scheduled.compareAndSet(false, true);
    }

    /** A task that must see this consumer's later permits only after it runs is about to be posted; any thread. */
    void hold(BroadcastConsumer bc) {
        HOLDS.incrementAndGet(bc);
    }

    /** Dispatch thread: applies every gathered permit, except those of held or not yet joined consumers. */
    void drain(Applier applier) {
        scheduled.set(false);
        BroadcastConsumer bc;
        while ((bc = queue.poll()) != null) {
            if (!bc.joined || bc.flowHolds > 0) {
                continue; // the join or the held task takes them when it ends (see release)
            }
            int permits = FLOWED.getAndSet(bc, 0);
            if (permits > 0) {
                applier.flow(bc, permits);
            }
        }
    }

    /**
     * Dispatch thread, at the end of the consumer's join ({@code held} false) or of a task announced with
     * {@link #hold} ({@code held} true): applies what was gathered for it meanwhile.
     */
    void release(BroadcastConsumer bc, boolean held, Applier applier) {
        if (held) {
            HOLDS.decrementAndGet(bc);
        }
        if (bc.joined && bc.flowHolds == 0) {
            int permits = FLOWED.getAndSet(bc, 0);
            if (permits > 0) {
                applier.flow(bc, permits);
            }
        }
    }
}
