package io.github.pulsarbroadcast.bench.floor;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.util.collection.LongObjectHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.common.api.proto.CommandAck;
import org.apache.pulsar.common.api.proto.CommandCloseConsumer;
import org.apache.pulsar.common.api.proto.CommandConnect;
import org.apache.pulsar.common.api.proto.CommandFlow;
import org.apache.pulsar.common.api.proto.CommandLookupTopic;
import org.apache.pulsar.common.api.proto.CommandLookupTopicResponse.LookupType;
import org.apache.pulsar.common.api.proto.CommandPartitionedTopicMetadata;
import org.apache.pulsar.common.api.proto.CommandSubscribe;
import org.apache.pulsar.common.api.proto.CommandUnsubscribe;
import org.apache.pulsar.common.protocol.Commands;
import org.apache.pulsar.common.protocol.PulsarHandler;

/**
 * One client connection of the floor server: answers what a consumer asks on the way to its subscription (CONNECT,
 * partitioned metadata: none, lookup: this server, SUBSCRIBE, CLOSE_CONSUMER) and keeps each consumer's flow permits
 * and next message. Each published message goes to every consumer that has permits, the frames of one pass copied
 * into one buffer ({@link FloorFrames}, as the broker's pass is), with one write and one flush per connection and
 * message; a consumer without permits gets it when its FLOW arrives. A pass stops where the connection would pass
 * the server's high water mark of written bytes: the frames still owed are written when it becomes writable again,
 * so the frames of a connection that falls behind wait in its consumers' state, not in the heap. Acknowledgements are
 * read and counted, nothing more. No storage, no cursor.
 *
 * <p>Threading: every method runs on the connection's event loop ({@link #publish} is handed over to it by
 * {@link FloorServer}); no field needs a lock.
 */
final class FloorHandler extends PulsarHandler {

    /** One consumer's permits and the next sequence number to send it. Threading: the event loop. */
    private static final class Sub {
        int permits;
        int next;
    }

    private final FloorServer server;
    private final LongObjectHashMap<Sub> subs = new LongObjectHashMap<>();
    /** This connection's frames of a pass; created with the context. */
    private FloorFrames frames;
    private boolean handshakeDone;
    /** A pump stopped at an unwritable connection: resume when it becomes writable. */
    private boolean blocked;

    FloorHandler(FloorServer server) {
        super(30, TimeUnit.SECONDS);
        this.server = server;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        super.channelActive(ctx);
        frames = new FloorFrames(ctx);
        server.opened(this);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        super.channelInactive(ctx);
        server.closed(this);
    }

    ChannelHandlerContext context() {
        return ctx;
    }

    @Override
    protected void handleConnect(CommandConnect connect) {
        handshakeDone = true;
        setRemoteEndpointProtocolVersion(connect.getProtocolVersion());
        ctx.writeAndFlush(Commands.newConnected(connect.getProtocolVersion(), Commands.DEFAULT_MAX_MESSAGE_SIZE));
    }

    @Override
    protected boolean isHandshakeCompleted() {
        return handshakeDone;
    }

    @Override
    protected void handlePartitionMetadataRequest(CommandPartitionedTopicMetadata request) {
        ctx.writeAndFlush(Commands.newPartitionMetadataResponse(0, request.getRequestId()));
    }

    @Override
    protected void handleLookup(CommandLookupTopic lookup) {
        ctx.writeAndFlush(Commands.newLookupResponse(server.serviceUrl(), null, true, LookupType.Connect,
                lookup.getRequestId(), false));
    }

    @Override
    protected void handleSubscribe(CommandSubscribe subscribe) {
        Sub sub = new Sub();
        sub.next = server.published() + 1; // starts at the latest message, like a new subscription
        subs.put(subscribe.getConsumerId(), sub);
        server.subscribed();
        ctx.writeAndFlush(Commands.newSuccess(subscribe.getRequestId()));
    }

    @Override
    protected void handleFlow(CommandFlow flow) {
        Sub sub = subs.get(flow.getConsumerId());
        if (sub != null) {
            sub.permits += flow.getMessagePermits();
            if (!blocked) {
                pump(flow.getConsumerId(), sub, 1);
                endPass(); // flushed at the end of the read
            }
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        ctx.flush();
    }

    @Override
    protected void handleAck(CommandAck ack) {
        server.acked(ack.getMessageIdsCount());
    }

    @Override
    protected void handleCloseConsumer(CommandCloseConsumer close) {
        subs.remove(close.getConsumerId());
        ctx.writeAndFlush(Commands.newSuccess(close.getRequestId()));
    }

    @Override
    protected void handleUnsubscribe(CommandUnsubscribe unsubscribe) {
        subs.remove(unsubscribe.getConsumerId());
        ctx.writeAndFlush(Commands.newSuccess(unsubscribe.getRequestId()));
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
        if (blocked && ctx.channel().isWritable()) {
            blocked = false;
            publish();
        }
        super.channelWritabilityChanged(ctx);
    }

    /** Message {@code seq} was published: every consumer with permits gets it now, one flush for them all. */
    void publish() {
        if (!blocked) { // a blocked connection is pumped again when it becomes writable
            int left = subs.size();
            for (LongObjectHashMap.PrimitiveEntry<Sub> e : subs.entries()) {
                if (!pump(e.key(), e.value(), left--)) {
                    break;
                }
            }
            endPass();
        }
        ctx.flush();
    }

    /**
     * Writes the pass. A pass stopped by the high water mark normally left the connection unwritable (its writability
     * event resumes it); if the mark was met exactly, no event follows: pump again on the next turn.
     */
    private void endPass() {
        frames.finish();
        if (blocked && ctx.channel().isWritable()) {
            blocked = false;
            ctx.executor().execute(this::publish);
        }
    }

    /**
     * Adds to this pass every published message the consumer has permits for ({@code consumersLeft}: consumers of
     * the pass from this one on, to size its buffer); false when the connection's high water mark stopped it (then
     * {@link #blocked}). The caller finishes the pass and flushes.
     */
    private boolean pump(long consumerId, Sub sub, int consumersLeft) {
        int last = server.published();
        while (sub.permits > 0 && sub.next <= last) {
            ByteBuf entry = server.entry(sub.next);
            if (entry != null) {
                if (!frames.fits()) {
                    blocked = true;
                    return false;
                }
                frames.add(consumerId, sub.next, entry, consumersLeft);
                sub.permits--;
            }
            sub.next++;
        }
        return true;
    }
}
