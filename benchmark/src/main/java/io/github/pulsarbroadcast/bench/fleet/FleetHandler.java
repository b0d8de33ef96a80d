package io.github.pulsarbroadcast.bench.fleet;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.util.collection.LongObjectHashMap;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.pulsar.common.api.proto.CommandAckResponse;
import org.apache.pulsar.common.api.proto.CommandActiveConsumerChange;
import org.apache.pulsar.common.api.proto.CommandCloseConsumer;
import org.apache.pulsar.common.api.proto.CommandConnected;
import org.apache.pulsar.common.api.proto.CommandError;
import org.apache.pulsar.common.api.proto.CommandLookupTopicResponse;
import org.apache.pulsar.common.api.proto.CommandMessage;
import org.apache.pulsar.common.api.proto.CommandPartitionedTopicMetadataResponse;
import org.apache.pulsar.common.api.proto.CommandReachedEndOfTopic;
import org.apache.pulsar.common.api.proto.CommandSuccess;
import org.apache.pulsar.common.api.proto.ServerError;
import org.apache.pulsar.common.protocol.Commands;
import org.apache.pulsar.common.protocol.PulsarHandler;

/**
 * One TCP connection of a {@link ClientGroup} to a broker, speaking the Pulsar binary protocol through
 * pulsar-common's {@link PulsarHandler} (frame and command parsing, keep-alive pings and pongs) and
 * {@link Commands} (encoding): CONNECT once, then the requests of the group's simulated consumers (each answered
 * through its {@link Pending}), MESSAGE frames to the consumer they name, CLOSE_CONSUMER from the broker.
 * Acknowledgements and flow permits made while a read is being handled are gathered in one buffer
 * ({@link CommandBatch}: the same bytes as one command each) and written and flushed once at the end of the read
 * batch ({@link #channelReadComplete}); with {@code flushEveryAck} each is flushed at once, as the stock Java client
 * does.
 *
 * <p>Threading: every method runs on the connection's event loop, which is also the group's; no field needs a lock.
 */
final class FleetHandler extends PulsarHandler {

    /** An answer the connection waits for. Threading: called on the event loop. */
    abstract static class Pending {
        /** A failure: {@code error} from the broker, or null when the connection was lost. */
        abstract void error(ServerError error, String message);

        void success() {
            error(ServerError.UnknownError, "unexpected SUCCESS");
        }

        void partitions(int partitions) {
            error(ServerError.UnknownError, "unexpected PARTITIONED_METADATA_RESPONSE");
        }

        void lookup(CommandLookupTopicResponse response) {
            error(ServerError.UnknownError, "unexpected LOOKUP_RESPONSE");
        }
    }

    private static final int KEEP_ALIVE_SECONDS = 30;

    private final ClientGroup group;
    private final String proxyTarget;
    private final boolean flushEveryAck;
    private final LongObjectHashMap<Pending> pending = new LongObjectHashMap<>();
    private final LongObjectHashMap<SimConsumer> consumers = new LongObjectHashMap<>();
    private final List<Consumer<FleetHandler>> waiting = new ArrayList<>();
    private final List<SimConsumer> waitingConsumers = new ArrayList<>();
    private boolean handshakeDone;
    private boolean closed;
    private boolean reading;
    /** Acks and flows made while a read is handled, written with one write at its end; created with the channel. */
    private CommandBatch gathered;

    FleetHandler(ClientGroup group, String proxyTarget, boolean flushEveryAck) {
        super(KEEP_ALIVE_SECONDS, TimeUnit.SECONDS);
        this.group = group;
        this.proxyTarget = proxyTarget;
        this.flushEveryAck = flushEveryAck;
    }

    /** Runs {@code then} once the handshake is done (at once if it is); {@code c} hears of a failure instead. */
    void whenReady(SimConsumer c, Consumer<FleetHandler> then) {
        if (closed) {
            c.disconnected("connection closed");
        } else if (handshakeDone) {
            then.accept(this);
        } else {
            waiting.add(then);
            waitingConsumers.add(c);
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        gathered = new CommandBatch(ctx.alloc(),
                flushEveryAck ? CommandBatch.ONE_COMMAND_CAPACITY : CommandBatch.READ_BATCH_CAPACITY);
        super.channelActive(ctx);
        ctx.writeAndFlush(Commands.newConnect("none", (String) null, FleetEngine.CLIENT_VERSION, proxyTarget));
    }

    @Override
    protected void handleConnected(CommandConnected connected) {
        setRemoteEndpointProtocolVersion(connected.getProtocolVersion());
        handshakeDone = true;
        List<Consumer<FleetHandler>> ready = new ArrayList<>(waiting);
        waiting.clear();
        waitingConsumers.clear();
        ready.forEach(then -> then.accept(this));
    }

    @Override
    protected boolean isHandshakeCompleted() {
        return handshakeDone;
    }

    /** Sends request {@code command} with id {@code requestId}; {@code answer} gets the response. */
    void request(ByteBuf command, long requestId, Pending answer) {
        if (closed) {
            command.release();
            answer.error(null, "connection closed");
            return;
        }
        pending.put(requestId, answer);
        sendNow(command);
    }

    /** Writes and flushes {@code command}, after the acks and flows gathered so far (to keep their order). */
    private void sendNow(ByteBuf command) {
        if (closed) {
            command.release();
        } else {
            writeGathered();
            ctx.writeAndFlush(command, ctx.voidPromise());
        }
    }

    /** Acknowledges one entry: gathered with the read's other acks and flows, or written and flushed at once. */
    void ack(long consumerId, long ledgerId, long entryId, boolean cumulative) {
        if (!closed) {
            gathered.ack(consumerId, ledgerId, entryId, cumulative);
            sendGatheredIfNotReading();
        }
    }

    /** Asks for {@code permits} more messages for {@code consumerId}, as {@link #ack} writes. */
    void flow(long consumerId, int permits) {
        if (!closed) {
            gathered.flow(consumerId, permits);
            sendGatheredIfNotReading();
        }
    }

    private void sendGatheredIfNotReading() {
        if (flushEveryAck || !reading) {
            writeGathered();
            ctx.flush();
        }
    }

    /** Writes the gathered acks and flows (before any other command, to keep the order they were made in). */
    private void writeGathered() {
        if (!gathered.isEmpty()) {
            ctx.write(gathered.take(), ctx.voidPromise());
        }
    }

    void register(SimConsumer c) {
        consumers.put(c.consumerId(), c);
    }

    void unregister(SimConsumer c) {
        consumers.remove(c.consumerId());
    }

    boolean isOpen() {
        return !closed;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        reading = true;
        super.channelRead(ctx, msg);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        reading = false;
        writeGathered();
        ctx.flush();
    }

    @Override
    protected void handleSuccess(CommandSuccess success) {
        Pending p = pending.remove(success.getRequestId());
        if (p != null) {
            p.success();
        }
    }

    @Override
    protected void handleError(CommandError error) {
        Pending p = pending.remove(error.getRequestId());
        if (p != null) {
            p.error(error.getError(), error.getMessage());
        }
    }

    @Override
    protected void handlePartitionResponse(CommandPartitionedTopicMetadataResponse response) {
        Pending p = pending.remove(response.getRequestId());
        if (p == null) {
            return;
        }
        if (response.hasError()) {
            p.error(response.getError(), response.hasMessage() ? response.getMessage() : "");
        } else {
            p.partitions(response.getPartitions());
        }
    }

    @Override
    protected void handleLookupResponse(CommandLookupTopicResponse response) {
        Pending p = pending.remove(response.getRequestId());
        if (p != null) {
            p.lookup(response);
        }
    }

    @Override
    protected void handleMessage(CommandMessage message, ByteBuf headersAndPayload) {
        SimConsumer c = consumers.get(message.getConsumerId());
        if (c != null) {
            c.onEntry(this, message.getMessageId().getLedgerId(), message.getMessageId().getEntryId(),
                    headersAndPayload);
        }
    }

    @Override
    protected void handleCloseConsumer(CommandCloseConsumer close) {
        SimConsumer c = consumers.remove(close.getConsumerId());
        if (c != null) {
            c.disconnected("the broker closed the consumer");
        }
    }

    @Override
    protected void handleActiveConsumerChange(CommandActiveConsumerChange change) {
        // Failover subscriptions announce the active consumer; a broadcast consumer gets every message regardless.
    }

    @Override
    protected void handleReachedEndOfTopic(CommandReachedEndOfTopic end) {
        // nothing to do: the run ends on its own
    }

    @Override
    protected void handleAckResponse(CommandAckResponse response) {
        // acknowledgements are sent without a request id; nothing waits for this
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        super.channelInactive(ctx);
        lost();
    }

    /** The TCP connect failed: the channel never became active. */
    void connectFailed() {
        lost();
    }

    private void lost() {
        if (closed) {
            return;
        }
        closed = true;
        if (gathered != null) {
            gathered.discard(); // null when the connection never became active
        }
        group.channelClosed(this);
        List<Pending> lost = new ArrayList<>(pending.values());
        pending.clear();
        lost.forEach(p -> p.error(null, "connection closed"));
        List<SimConsumer> orphans = new ArrayList<>(consumers.values());
        orphans.addAll(waitingConsumers);
        consumers.clear();
        waiting.clear();
        waitingConsumers.clear();
        orphans.forEach(c -> c.disconnected("connection closed"));
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        group.engine().noteError("connection to " + ctx.channel().remoteAddress() + ": " + cause);
        ctx.close();
    }

    /** Closes the connection (its consumers hear of it through {@link #channelInactive}). */
    void close() {
        if (ctx != null) {
            ctx.close();
        }
    }
}
