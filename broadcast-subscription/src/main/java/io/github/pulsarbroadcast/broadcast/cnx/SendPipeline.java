package io.github.pulsarbroadcast.broadcast.cnx;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.netty.handler.ssl.SslHandler;

/**
 * What broadcast sends need of a connection's pipeline, fixed once the channel is set up (the TLS handler is added
 * when the channel is initialized): looked up by the first send.
 *
 * <p>Threading: the connection's event loop only ({@code flushFrom} is null until the first send).
 */
final class SendPipeline {

    private boolean tls;
    private ChannelHandlerContext flushFrom;

    /** Whether the connection of {@code own} (the connection handler's context) is encrypted. */
    boolean isTls(ChannelHandlerContext own) {
        know(own);
        return tls;
    }

    /**
     * Past Netty's {@link FlushConsolidationHandler} on a plain connection: it holds flushes back to the event loop's
     * next turn, which would make this connection wait for every other send of a pass. The flush then starts next to
     * the socket; with TLS (whose {@link SslHandler} lies between and encrypts on flush) it starts at {@code own}.
     */
    ChannelHandlerContext flushContext(ChannelHandlerContext own) {
        know(own);
        return flushFrom;
    }

    private void know(ChannelHandlerContext own) {
        if (flushFrom == null) {
            tls = own.pipeline().get(SslHandler.class) != null;
            ChannelHandlerContext consolidation = own.pipeline().context(FlushConsolidationHandler.class);
            flushFrom = consolidation == null || tls ? own : consolidation;
        }
    }
}
