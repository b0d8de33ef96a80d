package io.github.pulsarbroadcast.broadcast.cnx;

import io.netty.channel.ChannelHandlerContext;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.common.api.proto.BaseCommand;
import org.apache.pulsar.common.protocol.Commands;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asks one client connection whether it is alive, on demand: a ping, then the answer is "alive" as soon as any frame
 * arrives from the client (its pong or anything else), and "dead" when nothing arrived within the timeout or the
 * connection closed; a dead connection is closed, as the broker's keep-alive closes one that missed a ping (later
 * Pulsar versions check a consumer's connection the same way before refusing a subscribe as busy). When the
 * connection's reading is paused (back-pressure: no frame can arrive) or the client predates pings, the answer is
 * "alive": the probe never closes a connection it cannot judge.
 *
 * <p>Threading: {@link #frameRead} and everything {@link #probe} does run on the connection's event loop;
 * {@link #probe} may be called from any thread and hops there. {@link #inFlight} is confined to the event loop.
 */
final class LivenessProbe {

    private static final Logger log = LoggerFactory.getLogger(LivenessProbe.class);

    /** The probe waiting for a frame, or null; event loop only. */
    private CompletableFuture<Boolean> inFlight;

    /** A frame arrived from the client: the connection is alive. Event loop. */
    void frameRead() {
        CompletableFuture<Boolean> waiting = inFlight;
        if (waiting != null) {
            inFlight = null;
            waiting.complete(true);
            if (log.isDebugEnabled()) {
                log.debug("Liveness probe answered by a frame from the client");
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
        ctx.executor().execute(() -> start(ctx, canPing, timeoutMs).whenComplete((alive, e) -> {
            if (e != null) {
                answer.completeExceptionally(e);
            } else {
                answer.complete(alive);
            }
        }));
        return answer;
    }

    private CompletableFuture<Boolean> start(ChannelHandlerContext ctx, boolean canPing, long timeoutMs) {
        if (!ctx.channel().isActive()) {
            return CompletableFuture.completedFuture(false);
        }
        if (!canPing || !ctx.channel().config().isAutoRead()) {
            if (log.isDebugEnabled()) {
                log.debug("[{}] Liveness not probed (pings: {}, reading: {}): taken as alive",
                        ctx.channel().remoteAddress(), canPing, ctx.channel().config().isAutoRead());
            }
            return CompletableFuture.completedFuture(true);
        }
        if (inFlight != null) {
            return inFlight;
        }
        CompletableFuture<Boolean> probe = new CompletableFuture<>();
        inFlight = probe;
        ctx.channel().closeFuture().addListener(f -> ctx.executor().execute(() -> settle(probe, false)));
        ctx.writeAndFlush(ping()).addListener(f -> {
            if (!f.isSuccess()) {
                ctx.executor().execute(() -> dead(ctx, probe, "the ping could not be written"));
            }
        });
        ctx.executor().schedule(() -> {
            if (probe.isDone()) {
                return;
            }
            if (!ctx.channel().config().isAutoRead()) {
                settle(probe, true);
            } else {
                dead(ctx, probe, "no answer to a ping within " + timeoutMs + " ms");
            }
        }, timeoutMs, TimeUnit.MILLISECONDS);
        return probe;
    }

    /** A PING command (the stock constructor is not public); rare enough to be built each time. */
    private static io.netty.buffer.ByteBuf ping() {
        BaseCommand cmd = new BaseCommand().setType(BaseCommand.Type.PING);
        cmd.setPing();
        return Commands.serializeWithSize(cmd);
    }

    private void dead(ChannelHandlerContext ctx, CompletableFuture<Boolean> probe, String why) {
        if (probe.isDone()) {
            return;
        }
        log.warn("[{}] Closing the connection as dead: {} (a subscribe asked for a consumer name it holds)",
                ctx.channel().remoteAddress(), why);
        settle(probe, false);
        ctx.close();
    }

    private void settle(CompletableFuture<Boolean> probe, boolean alive) {
        if (inFlight == probe) {
            inFlight = null;
        }
        probe.complete(alive);
    }
}
