package io.github.pulsarbroadcast.broadcast.dispatch;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.apache.pulsar.common.protocol.ByteBufPair;

/**
 * What the dispatcher needs of a client connection: hand it a {@link ConnectionSend}, write frames, tell a consumer
 * that the topic ended, and route the consumer's acks and flows back. The plugin's connection handler implements it;
 * the dispatcher depends on this interface only, never on the handler, so that dependencies run one way
 * ({@code cnx} to {@code dispatch}) and the dispatch core runs in tests without a broker.
 *
 * <p>Threading: {@link #submit}, {@link #reachedEndOfTopic}, {@link #probeLiveness} and the registry methods may be
 * called from any thread; {@link #ctx}, {@link #writesFramesDirectly}, {@link #flushContext} and
 * {@link #newMessageAndIntercept} only on the connection's event loop (from {@link ConnectionSend#run}).
 */
public interface ConsumerConnection {

    /**
     * Runs {@code send} on this connection's event loop, which writes it and releases it.
     *
     * @throws java.util.concurrent.RejectedExecutionException when the event loop no longer takes tasks; the caller
     *         then still owns {@code send} and must release it (so for any exception: an implementation throws only
     *         before it queued the send)
     */
    void submit(ConnectionSend send);

    /** Tells the consumer that the topic was terminated and it received every message. */
    void reachedEndOfTopic(long consumerId);

    /** Whether messages to this client keep their broker entry metadata. */
    boolean receivesBrokerEntryMetadata();

    /** Takes the join request a broadcast subscribe left for {@code consumerId}, or null. */
    InitialPosition takeBroadcastJoin(long consumerId);

    /** Routes the consumer's acks and flows to {@code consumer} from now on. */
    void registerBroadcastConsumer(long consumerId, BroadcastConsumer consumer);

    /** Stops routing to {@code consumer} (if it is still the one registered under the id). */
    void forgetBroadcastConsumer(long consumerId, BroadcastConsumer consumer);

    /**
     * Asks the client whether this connection is alive (a ping): completes with true as soon as anything arrives
     * from it, or if it cannot tell (reading paused, a client too old for pings); with false, after closing the
     * connection as dead, when nothing arrived within {@code timeoutMs} or the connection closed. Any thread;
     * concurrent probes of one connection share one ping.
     */
    java.util.concurrent.CompletableFuture<Boolean> probeLiveness(long timeoutMs);

    // ----- writing (event loop only) -----

    ChannelHandlerContext ctx();

    /** Whether sends may use the plugin's own frame headers instead of the stock per-message path. */
    boolean writesFramesDirectly();

    /** Where a send's flush starts, so that it leaves at once (see the implementation). */
    ChannelHandlerContext flushContext();

    /** The stock per-message path, with its interceptor calls. */
    ByteBufPair newMessageAndIntercept(long consumerId, long ledgerId, long entryId, int partition,
                                       int redeliveryCount, ByteBuf metadataAndPayload, long[] ackSet, String topic,
                                       long epoch);
}
