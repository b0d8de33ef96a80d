package io.github.pulsarbroadcast.broadcast.dispatch;

import io.github.pulsarbroadcast.broadcast.dispatch.RetainedCursors.NameBusyException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a subscribe does when its consumer name is held by a connected consumer (the holder): rather than refuse at
 * once, it waits up to {@code broadcastBusyNameWaitMs} for the name to be released, and joins again once if it is.
 * <ul>
 *   <li>The holder on <b>another connection</b>: that connection is pinged ({@link ConsumerConnection#probeLiveness}).
 *       If it answers, the holder is alive and the subscribe is refused at once, as before: a name cannot be taken
 *       from a live consumer. If it does not answer within the wait, the broker closes it as dead (what its
 *       keep-alive would do 30 to 60 s later), stock code removes its consumers, and the waiting subscribe takes the
 *       name: a vehicle back from a tunnel, whose old TCP connection the broker still believes in, is served within
 *       the wait instead of being refused until the keep-alive notices.</li>
 *   <li>The holder on the <b>same connection</b>: no ping (the connection is obviously alive); the subscribe waits for
 *       the holder to close. This is the stock Java client closing a consumer while its re-subscribe is in flight: the
 *       close completes at once on the client, the re-subscribe then succeeds on the broker and the client closes
 *       the whole connection to drop it, and a new subscribe under the same name must not fail meanwhile.</li>
 * </ul>
 * Either way the subscribe is refused with the holder's {@link NameBusyException} (the stock
 * {@code ConsumerBusyException}) if the name is still held when the wait ends (for a holder on another connection,
 * {@value #RELEASE_MARGIN_MS} ms later: the time stock code takes to remove a closed connection's consumers). With a
 * wait of 0 it is refused at once. The caller's join may meet the name held again (two subscribes waited for it, and
 * the other took it); it then waits again within what is left of its wait (see {@code BroadcastSubscription}).
 *
 * <p>Threading: stateless. The future {@link #await} returns completes on the first of: the holder leaving (the thread
 * that detaches it), the probe's answer (the holder's event loop), or the end of the wait (the scheduler); the join
 * that follows runs on {@code joinExecutor}, never inside the stock removal that released the name.
 */
final class NameHandover {

    private static final Logger log = LoggerFactory.getLogger(NameHandover.class);

    /** Time beyond the wait for a connection closed as dead to have its consumers removed by stock code. */
    static final long RELEASE_MARGIN_MS = 1_000;

    /** Where the holder's leave is announced ({@link RetainedCursors}). */
    interface Releases {
        /** Keeps {@code task} to run when {@code holder} leaves its name; false (nothing kept) if it already has. */
        boolean whenReleased(BroadcastConsumer holder, Runnable task);

        /** Forgets a task kept by {@link #whenReleased} (the wait ended otherwise). */
        void forgetRelease(BroadcastConsumer holder, Runnable task);
    }

    private NameHandover() {
    }

    /**
     * Waits for {@code busy}'s name to be released (see the class comment) and then runs {@code joinAgain} on
     * {@code joinExecutor}; fails with {@code busy} when the holder is alive or still holds the name at
     * {@code deadlineNanos} ({@link System#nanoTime}). A holder on another connection is probed with {@code probeMs},
     * the whole configured wait, also when this subscribe waits again with less left: a connection is judged dead only
     * when it did not answer for that long (regression, forty-third session, found by a review: the second wait
     * probed with what was left, a few milliseconds, and closed live connections whose answer takes longer, with
     * every consumer on them).
     */
    static CompletableFuture<Void> await(String logName, NameBusyException busy, ConsumerConnection joining,
                                         long deadlineNanos, long probeMs, Releases releases,
                                         ScheduledExecutorService scheduler, Executor joinExecutor,
                                         Supplier<CompletableFuture<Void>> joinAgain) {
        long waitMs = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
        if (waitMs <= 0) {
            return CompletableFuture.failedFuture(busy);
        }
        BroadcastConsumer holder = busy.holder;
        CompletableFuture<Boolean> released = new CompletableFuture<>();
        Runnable onRelease = () -> released.complete(true);
        if (!releases.whenReleased(holder, onRelease)) {
            return CompletableFuture.supplyAsync(joinAgain, joinExecutor).thenCompose(f -> f);
        }
        if (holder.cnx != joining) {
            holder.cnx.probeLiveness(probeMs).whenComplete((alive, e) -> {
                if (e != null || Boolean.TRUE.equals(alive)) {
                    if (log.isDebugEnabled()) {
                        log.debug("{} Consumer name '{}' stays with its holder ({}): refused", logName,
                                holder.name, e != null ? e.toString() : "it answered or could not be judged");
                    }
                    released.complete(false);
                } else {
                    log.info("{} Consumer name '{}' was held by a connection that closed or did not answer a ping"
                            + " within {} ms; a new subscribe takes the name once stock code removed its consumers",
                            logName, holder.name, probeMs);
                }
            });
        }
        long giveUpMs = holder.cnx != joining ? waitMs + RELEASE_MARGIN_MS : waitMs;
        ScheduledFuture<?> giveUp = scheduler.schedule(() -> released.complete(false), giveUpMs,
                TimeUnit.MILLISECONDS);
        return released.thenComposeAsync(free -> {
            giveUp.cancel(false);
            if (free) {
                return joinAgain.get();
            }
            releases.forgetRelease(holder, onRelease);
            return CompletableFuture.failedFuture(busy);
        }, joinExecutor);
    }
}
