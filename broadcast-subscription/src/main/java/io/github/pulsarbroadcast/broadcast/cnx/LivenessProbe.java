package io.github.pulsarbroadcast.broadcast.cnx;

import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.common.api.proto.BaseCommand;
import org.apache.pulsar.common.protocol.Commands;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asks one client connection whether it is alive, on demand: a ping, then the answer is "alive" as soon as any frame
 * arrives from the client (its pong or anything else), and "dead" when the ping reached the socket and nothing
 * arrived within the timeout, or the connection closed; a dead connection is closed, as the broker's keep-alive closes
 * one that missed a ping (later Pulsar versions check a consumer's connection the same way before refusing a subscribe
 * as busy). The probe never closes a connection it cannot judge; it answers "alive" when the connection's reading is
 * paused (back-pressure: no frame can arrive), when the client predates pings, and when the ping is still queued
 * behind earlier writes at the timeout (a slow link: its answer could not have come yet). The broker's keep-alive
 * decides about those, as it always did.
 *
 * <p>Threading: {@link #frameRead} and everything {@link #probe} does run on the connection's event loop;
 * {@link #probe} may be called from any thread and hops there. {@link #inFlight} is confined to the event loop.
 */
final class LivenessProbe {

    private static final Logger log = LoggerFactory.getLogger(LivenessProbe.class);

    /** The ping waiting for a frame, or null; event loop only. */
    private Ping inFlight;

    /** One ping: its answer, and the close listener to take off the channel once it is settled. */
    private final class Ping {
        final CompletableFuture<Boolean> answer = new CompletableFuture<>();
        final ChannelHandlerContext ctx;
        final ChannelFutureListener onClose = f -> f.channel().eventLoop().execute(() -> settle(this, false));
        ChannelFuture written;

        Ping(ChannelHandlerContext ctx) {
            this.ctx = ctx;
        }
    }

    /** A frame arrived from the client: the connection is alive. Event loop. */
    void frameRead() {
        Ping waiting = inFlight;
        if (waiting != null) {
            settle(waiting, true);
            if (log.isDebugEnabled()) {
                log.debug("[{}] Liveness probe answered by a frame from the client", waiting.ctx.channel());
            }
        }
    }

    /**
     * Pings the client on {@code ctx}'s connection; see the class comment. Concurrent probes share one ping.
     *
     * @param canPing whether the client understands pings (protocol version 1 or later)
     */
    CompletableFuture<Boolean> probe(ChannelHandlerContext ctx, boolean canPing, long timeoutMs) {
        CompletableFuture<Boolean> answer = new CompletableFuture<>();
        try {
            ctx.executor().execute(() -> start(ctx, canPing, timeoutMs).whenComplete((alive, e) -> {
                if (e != null) {
                    answer.completeExceptionally(e);
                } else {
                    answer.complete(alive);
                }
            }));
        } catch (RejectedExecutionException e) {
            answer.complete(false); // the event loop is shutting down: so is the connection
        }
        return answer;
    }

    private CompletableFuture<Boolean> start(ChannelHandlerContext ctx, boolean canPing, long timeoutMs) {
        if (!ctx.channel().isActive()) {
            return CompletableFuture.completedFuture(false);
        }
        if (!canPing || !ctx.channel().config().isAutoRead()) {
            if (log.isDebugEnabled()) {
                log.debug("[{}] Liveness not probed (pings: {}, reading: {}): taken as alive", ctx.channel(),
                        canPing, ctx.channel().config().isAutoRead());
            }
            return CompletableFuture.completedFuture(true);
        }
        if (inFlight != null) {
            return inFlight.answer;
        }
        Ping ping = new Ping(ctx);
        inFlight = ping;
        ctx.channel().closeFuture().addListener(ping.onClose);
        ping.written = ctx.writeAndFlush(ping());
        ping.written.addListener(f -> {
            if (!f.isSuccess()) {
                dead(ping, "the ping could not be written");
            }
        });
        ctx.executor().schedule(() -> timedOut(ping, timeoutMs), timeoutMs, TimeUnit.MILLISECONDS);
        return ping.answer;
    }

    private void timedOut(Ping ping, long timeoutMs) {
        if (ping.answer.isDone()) {
            return;
        }
        if (!ping.ctx.channel().config().isAutoRead() || !ping.written.isDone()) {
            // Reading paused since, or the ping still queued behind earlier writes: no answer could have come.
            settle(ping, true);
        } else {
            dead(ping, "no answer to a ping within " + timeoutMs + " ms");
        }
    }

    /** A PING command (the stock constructor is not public); rare enough to be built each time. */
    private static io.netty.buffer.ByteBuf ping() {
        BaseCommand cmd = new BaseCommand().setType(BaseCommand.Type.PING);
        cmd.setPing();
        return Commands.serializeWithSize(cmd);
    }

    private void dead(Ping ping, String why) {
        if (ping.answer.isDone()) {
            return;
        }
        log.warn("[{}] Closing the connection as dead: {} (a subscribe asked for a consumer name it holds)",
                ping.ctx.channel().remoteAddress(), why);
        settle(ping, false);
        ping.ctx.close();
    }

    private void settle(Ping ping, boolean alive) {
        if (inFlight == ping) {
            inFlight = null;
        }
        ping.ctx.channel().closeFuture().removeListener(ping.onClose);
        ping.answer.complete(alive);
    }
}
