package io.github.pulsarbroadcast.broadcast.dispatch;

import io.github.pulsarbroadcast.broadcast.positions.PositionStore;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.broker.service.BrokerServiceException;
import org.apache.pulsar.common.util.FutureUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The operator's reset-cursors of one subscription as the periodic sync and joins see them: while one runs, joins are
 * refused and the mark-delete position holds still; a mark-delete computed from a scan that began before a reset is
 * never issued ({@link #markDeleteUnlessResetSince}), because the reset restarts every position after that scan. A
 * reset ends, and answers the operator, only when the positions it restarted are saved ({@link #finish}).
 *
 * <p>Threading: {@link #begin} runs on the admin's thread, {@link #end} on the thread that completes the reset's
 * save (or its time-out), {@link #saving} on the thread that completes stock's reset, the rest on the dispatch thread
 * (and {@link #underWay} on subscribe threads). Both counts are guarded by this object's monitor, under which the
 * sync also issues its mark-delete, so a reset that begins after the check cannot slip in before the mark-delete is
 * issued; {@link #underWay} reads the running count without the lock (volatile).
 */
final class ResetGate {

    private static final Logger log = LoggerFactory.getLogger(ResetGate.class);
    /** How long a reset waits for the save of the positions it restarted before it answers an error. */
    static final long SAVE_TIMEOUT_SECONDS = 10;

    /**
     * The save of the positions the running reset restarted ({@link #saving}); completed when there is none. Written
     * on the thread that completes stock's reset, before it completes it; read by the continuation of that
     * completion (volatile).
     */
    private volatile CompletableFuture<Void> saved = CompletableFuture.completedFuture(null);

    /** Resets under way. Written under the monitor; volatile for lock-free readers. */
    private volatile int running;
    /** Resets begun so far. Guarded by the monitor. */
    private long begun;

    /** An operator's reset-cursor starts. */
    synchronized void begin() {
        begun++;
        running++;
        // saved is left as it is: a reset that begins just before another's answer reads it would otherwise make that
        // answer skip its save (a review). A reset whose stock part succeeds always sets it ({@link #saving}).
    }

    /** The managed cursor was reset, and {@code save} saves the positions the reset restarted. */
    void saving(CompletableFuture<Void> save) {
        saved = save;
    }

    /**
     * Ends the reset that {@link #begin} began once stock's part ({@code stockReset}: it resets the managed cursor)
     * is done and, when that worked, the positions it restarted are saved. The reset then answers the operator with an
     * error when the save failed or took longer than {@value #SAVE_TIMEOUT_SECONDS} s: the reset is in effect on this
     * broker, and the next periodic save retries, but a crash before a save works would bring back positions from
     * before it (found by the dispatch model test once saves could fail, forty-fourth session: the reset answered
     * success, and a crash undid it for every consumer). Stock's reset answers once its position is stored too.
     */
    CompletableFuture<Void> finish(CompletableFuture<Void> stockReset, String name) {
        return stockReset.thenCompose(v -> saved.copy().orTimeout(SAVE_TIMEOUT_SECONDS, TimeUnit.SECONDS)
                .exceptionally(e -> {
                    Throwable cause = FutureUtil.unwrapCompletionException(e);
                    String why = cause instanceof java.util.concurrent.TimeoutException
                            ? "not done within " + SAVE_TIMEOUT_SECONDS + " s"
                            : cause instanceof PositionStore.NotSaved ? cause.getMessage() : cause.toString();
                    log.warn("{} The subscription was reset, but saving the consumers' positions failed: {}", name,
                            why);
                    throw new CompletionException(new BrokerServiceException(answer(cause, why)));
                })).whenComplete((v, e) -> end());
    }

    /** The error a reset whose save failed answers: what it means and what to do. */
    private static String answer(Throwable cause, String why) {
        if (cause instanceof PositionStore.NotSaved && PositionSync.DELETING.equals(why)) {
            return "The subscription was reset while it is being deleted: its consumers' positions were not saved.";
        }
        if (cause instanceof PositionStore.NotSaved) {
            return "The subscription was reset, but its consumers' positions can no longer be saved on this broker ("
                    + why + "): the broker that serves it next may bring back their positions from before the reset."
                    + " Run the reset-cursor again.";
        }
        return "The subscription was reset, but its consumers' positions could not be saved (" + why + "): until the"
                + " next periodic save works, a broker crash would bring back their positions from before the reset."
                + " Run the reset-cursor again.";
    }

    /** It ended (done or failed). */
    private synchronized void end() {
        running--;
    }

    boolean underWay() {
        return running > 0;
    }

    /** What {@link #markDeleteUnlessResetSince} compares with: read before a scan starts. */
    synchronized long begunSoFar() {
        return begun;
    }

    /**
     * Issues {@code markDelete} (the scan's result) unless a reset runs or began since {@code begunBeforeScan}:
     * returns whether it did.
     */
    synchronized boolean markDeleteUnlessResetSince(long begunBeforeScan, SubscriptionStorage storage,
                                                    PositionImpl markDelete) {
        if (running > 0 || begun != begunBeforeScan) {
            return false;
        }
        storage.markDelete(markDelete);
        return true;
    }
}
