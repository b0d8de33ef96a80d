package io.github.pulsarbroadcast.broadcast.dispatch;

/**
 * One consumer's flow and redelivery requests that the dispatch thread has not applied yet, so that a consumer has
 * at most one task queued on the dispatch thread however many flow or redeliver commands its connection reads
 * meanwhile: the executor's queue stays bounded by the number of consumers even when a client floods flows or the
 * dispatch thread is busy (issue 10, "memory under overload").
 *
 * <p>Order is kept where it matters: permits offered before the first pending redelivery are applied before it, the
 * others after it. Redeliveries offered before the task runs merge into one, with the highest epoch: a redelivery
 * rewinds the consumer to its acknowledged position, so a second one right after the first sends nothing more, and
 * the permits between the two are applied after the merged one, which is where the second would have used them.
 * Permits add up saturating at {@link Integer#MAX_VALUE}.
 *
 * <p>Threading: offered from any thread (the connection's event loop; stock threads for a redelivery), taken by the
 * dispatch thread; every field is guarded by this object's monitor, held only to add or take numbers.
 */
final class ConsumerInbox {

    private long permitsBefore;
    private long permitsAfter;
    private boolean redeliver;
    private long redeliverEpoch;
    /** Whether a task that will take this inbox is queued and has not taken it yet. */
    private boolean queued;

    /** Adds {@code permits} (positive); true when the caller must queue the task that takes this inbox. */
    synchronized boolean offerPermits(int permits) {
        if (redeliver) {
            permitsAfter += permits;
        } else {
            permitsBefore += permits;
        }
        return queue();
    }

    /** Asks for a redelivery at {@code epoch}; true when the caller must queue the task that takes this inbox. */
    synchronized boolean offerRedelivery(long epoch) {
        if (redeliver) {
            redeliverEpoch = Math.max(redeliverEpoch, epoch);
        } else {
            redeliver = true;
            redeliverEpoch = epoch;
        }
        return queue();
    }

    private boolean queue() {
        if (queued) {
            return false;
        }
        queued = true;
        return true;
    }

    /** Moves everything offered so far into {@code out} and empties the inbox; dispatch thread. */
    synchronized void takeInto(Taken out) {
        out.permitsBefore = saturated(permitsBefore);
        out.redeliver = redeliver;
        out.redeliverEpoch = redeliverEpoch;
        out.permitsAfter = saturated(permitsAfter);
        permitsBefore = 0;
        permitsAfter = 0;
        redeliver = false;
        queued = false;
    }

    private static int saturated(long permits) {
        return (int) Math.min(Integer.MAX_VALUE, permits);
    }

    /**
     * What one take found, in the order to apply it: permits, then the redelivery if any, then permits. A scratch
     * object owned by the dispatch thread, reused for every take.
     */
    static final class Taken {
        int permitsBefore;
        boolean redeliver;
        long redeliverEpoch;
        int permitsAfter;
    }
}
