package io.github.pulsarbroadcast.broadcast.cnx;

import io.github.pulsarbroadcast.broadcast.BroadcastMode;
import io.github.pulsarbroadcast.broadcast.BroadcastService;
import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastConsumer;
import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastSubscription;
import io.github.pulsarbroadcast.broadcast.dispatch.ConnectionSend;
import io.github.pulsarbroadcast.broadcast.dispatch.ConsumerConnection;
import io.github.pulsarbroadcast.broadcast.dispatch.SubscriptionInstaller;
import io.netty.channel.ChannelHandlerContext;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.broker.service.ServerCnx;
import org.apache.pulsar.broker.service.Topic;
import org.apache.pulsar.broker.service.persistent.PersistentSubscription;
import org.apache.pulsar.broker.service.persistent.PersistentTopic;
import org.apache.pulsar.common.api.proto.CommandAck;
import org.apache.pulsar.common.api.proto.CommandCloseConsumer;
import org.apache.pulsar.common.api.proto.CommandConnect;
import org.apache.pulsar.common.api.proto.CommandFlow;
import org.apache.pulsar.common.api.proto.CommandSeek;
import org.apache.pulsar.common.api.proto.CommandSubscribe;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.apache.pulsar.common.api.proto.ProtocolVersion;
import org.apache.pulsar.common.api.proto.ServerError;
import org.apache.pulsar.common.naming.TopicName;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client connection. Subscribe, ack, flow and seek commands of broadcast consumers are routed to the plugin;
 * every other command, and every command of a stock consumer, goes to {@link ServerCnx} unchanged.
 *
 * <p>A broadcast subscribe is prepared, then handed to the stock subscribe path: the plugin authorizes the consumer
 * exactly as stock Pulsar does (so nothing is created for a client that may not consume), makes sure the topic holds
 * a {@link BroadcastSubscription} under that name, records how the consumer asked to join, and calls
 * {@link ServerCnx#handleSubscribe}, which authorizes again, validates, registers the consumer and attaches it.
 * When the subscription already is a broadcast subscription on this broker there is nothing to prepare, and the
 * subscribe goes to the stock path at once (still authorized there).
 *
 * <p>Threading: like {@link ServerCnx}, every {@code handle*} method runs on this connection's Netty event loop; the
 * continuation of a subscribe held off the event loop is put back on it ({@link HeldSubscribes}: a close of the
 * consumer meanwhile drops it). {@link #pendingJoins} and {@link #broadcastConsumers}
 * are concurrent because stock Pulsar attaches and removes consumers on its own threads. Acknowledgements are
 * applied on this event loop as they are decoded (the default, as stock Pulsar), or with
 * {@code broadcastAcksOnEventLoop=false} on random executor threads and answered from there (Netty writes are
 * thread-safe), where {@link #ackGate} bounds how many wait. The dispatcher reaches this connection only through
 * {@link ConsumerConnection}.
 */
public class BroadcastServerCnx extends ServerCnx implements ConsumerConnection {

    private static final Logger log = LoggerFactory.getLogger(BroadcastServerCnx.class);

    private final BroadcastService service;
    private final SubscribePreparation preparation;
    /** The refusals this handler answers itself. */
    private final SubscribeAnswers answers;
    /** Broadcast subscribes in flight, by consumer id; taken when the consumer attaches. */
    private final PendingJoins pendingJoins = new PendingJoins(this::subscribeInFlight);
    /** Subscribes held back while they are prepared off the event loop (event loop only). */
    private final HeldSubscribes held = new HeldSubscribes();
    /** Bounds the acks waiting to be applied. */
    private final AckGate ackGate;
    /** Consumer id to the attached broadcast consumer, for routing its acks and flows. */
    private final Map<Long, BroadcastConsumer> broadcastConsumers = new ConcurrentHashMap<>();
    /** Whether the client said it reads broker entry metadata; written once in handleConnect. */
    private volatile boolean clientSupportsBrokerEntryMetadata;
    /** What sends need of the pipeline. */
    private final SendPipeline pipeline = new SendPipeline();
    /** Answers whether this connection is alive when a subscribe wants a consumer name held here. */
    private final LivenessProbe liveness = new LivenessProbe();

    /** {@code installer} and {@code failures} are the broker's ones ({@link BroadcastChannelInitializer#factory}). */
    BroadcastServerCnx(PulsarService pulsar, String listenerName, BroadcastService service,
                       SubscriptionInstaller installer, SubscribeFailures failures) {
        super(pulsar, listenerName);
        this.service = service;
        this.preparation = new SubscribePreparation(this, installer);
        this.answers = new SubscribeAnswers(this::getCommandSender, failures);
        this.ackGate = new AckGate(service.config().maxPendingAcksPerConnection(), AckGate.Reads.of(
                this::disableCnxAutoRead, this::enableCnxAutoRead, task -> ctx().executor().execute(task)),
                service.ackReadPauses());
    }

    @Override
    protected void handleConnect(CommandConnect connect) {
        clientSupportsBrokerEntryMetadata = connect.hasFeatureFlags()
                && connect.getFeatureFlags().isSupportsBrokerEntryMetadata();
        super.handleConnect(connect);
    }

    /** Whether messages to this client keep their broker entry metadata (as stock Pulsar decides it). */
    @Override
    public boolean receivesBrokerEntryMetadata() {
        return clientSupportsBrokerEntryMetadata
                && getRemoteEndpointProtocolVersion() >= ProtocolVersion.v18.getValue()
                && service.pulsar().getConfiguration().isExposingBrokerEntryMetadataToClientEnabled();
    }

    /**
     * Whether broadcast sends on this connection may write their own frames ({@code MessageFrames}) instead of going
     * through the stock per-message path: only without TLS (the stock pipeline then copies what it sends, because
     * the TLS handler may change the buffers) and when no other broker interceptor expects per-message calls.
     * Event loop.
     */
    @Override
    public boolean writesFramesDirectly() {
        return service.onlyInterceptor() && !pipeline.isTls(ctx());
    }

    /** See {@link SendPipeline#flushContext}. Event loop. */
    @Override
    public ChannelHandlerContext flushContext() {
        return pipeline.flushContext(ctx());
    }

    // ----- subscribe -----

    @Override
    protected void handleSubscribe(CommandSubscribe subscribe) {
        if (!isHandshakeCompleted()) {
            // Before CONNECT (or an authentication) has completed nothing may be looked up or created: the stock
            // path refuses the command and closes the connection, as it does for any subscribe.
            super.handleSubscribe(subscribe);
            return;
        }
        if (held.isHeld(subscribe.getConsumerId())) {
            answers.alreadyPresent(subscribe);
            return;
        }
        if (!BroadcastMode.requested(subscribe)) {
            handleStockSubscribe(subscribe);
            return;
        }
        TopicName topicName;
        try {
            topicName = TopicName.get(subscribe.getTopic());
        } catch (RuntimeException e) {
            super.handleSubscribe(subscribe); // stock reports the invalid topic name
            return;
        }
        String problem = BroadcastMode.explain(subscribe, topicName.isPersistent());
        if (problem != null) {
            answers.refused(topicName.toString(), subscribe, getRemoteAddress(), problem);
            return;
        }
        if (alreadyServedAsBroadcast(topicName, subscribe.getSubscription())) {
            // The common case, every join after the first: nothing to create, so nothing to authorize first; the
            // stock path authorizes, validates and attaches the consumer, as it would for any subscription.
            pendingJoins.put(subscribe.getConsumerId(), subscribe.getInitialPosition());
            super.handleSubscribe(subscribe);
            return;
        }
        holdAndAuthorize(topicName, subscribe, (copy, hold) ->
                preparation.install(topicName, copy, getOriginalPrincipal()).whenComplete((v, error) ->
                        resume(copy, hold, () -> continueSubscribe(copy, error))));
    }

    /**
     * Holds a copy of {@code subscribe} (the decoder reuses the command object) and authorizes CONSUME: a client that
     * may not consume is refused as stock refuses it; for one that may, {@code authorized} runs (on the thread that
     * answered) and ends in {@link #resume}. One that throws ends the subscribe with that error.
     */
    private void holdAndAuthorize(TopicName topicName, CommandSubscribe subscribe,
                                  BiConsumer<CommandSubscribe, Object> authorized) {
        CommandSubscribe copy = new CommandSubscribe().copyFrom(subscribe);
        Object hold = held.hold(copy.getConsumerId());
        authorizeConsume(topicName, copy.getSubscription()).whenComplete((allowed, authError) -> {
            if (authError != null) {
                resume(copy, hold, () -> answers.unauthorized(copy, getAuthRole(), authError));
            } else if (!allowed) {
                resume(copy, hold, () -> super.handleSubscribe(copy)); // stock refuses with its own message
            } else {
                try {
                    authorized.accept(copy, hold);
                } catch (RuntimeException e) {
                    resume(copy, hold, () -> continueSubscribe(copy, e));
                }
            }
        });
    }

    /**
     * Runs {@code then} on the event loop, unless the client closed the consumer while its subscribe was held: then
     * the subscribe is dropped, as stock drops a consumer whose creation a close overtook. What {@code then} throws
     * (stock's subscribe can throw on a command it cannot read) is handled as stock handles one from its decoding,
     * which closes the connection; left to the event loop, it was only logged and the client never answered.
     */
    private void resume(CommandSubscribe copy, Object hold, Runnable then) {
        ctx().executor().execute(() -> {
            if (held.release(copy.getConsumerId(), hold)) {
                try {
                    then.run();
                } catch (RuntimeException e) {
                    exceptionCaughtHere(e);
                }
            } else {
                log.info("[{}][{}] Consumer {} (id {}) was closed by the client before its subscribe completed:"
                        + " not created", copy.getTopic(), copy.getSubscription(), copy.getConsumerName(),
                        copy.getConsumerId());
            }
        });
    }

    /**
     * What this handler does with an exception from its own decoding (stock's {@code exceptionCaught}: log, close the
     * connection). Called directly: {@code ctx().fireExceptionCaught} would pass it to the handler after this one, the
     * pipeline's tail, which only logs it (regression, forty-third session's review of the first version).
     */
    private void exceptionCaughtHere(Throwable e) {
        try {
            exceptionCaught(ctx(), e);
        } catch (Exception closing) {
            log.warn("[{}] Closing the connection after an exception failed", getRemoteAddress(), closing);
            ctx().close();
        }
    }

    private void continueSubscribe(CommandSubscribe copy, Throwable error) {
        if (error != null) {
            answers.failed(copy, error);
            return;
        }
        pendingJoins.put(copy.getConsumerId(), copy.getInitialPosition());
        super.handleSubscribe(copy);
    }

    /** True when the topic is loaded here and {@code subscription} on it is already a broadcast subscription. */
    private boolean alreadyServedAsBroadcast(TopicName topicName, String subscription) {
        return preparation.loadedSubscription(topicName, subscription) instanceof BroadcastSubscription;
    }

    /**
     * Authorizes a CONSUME on the topic exactly as the stock subscribe path does (proxy roles included): the
     * connection's role with the connection's own data ({@code getAuthData}; {@code getAuthenticationData} is the
     * proxied client's when a proxy forwarded it: a review, forty-sixth session).
     */
    private CompletableFuture<Boolean> authorizeConsume(TopicName topicName, String subscription) {
        return ConsumeAuthorization.check(getBrokerService(), topicName, subscription, getAuthRole(),
                getAuthData(), getOriginalPrincipal(), getOriginalAuthData());
    }

    /**
     * A subscribe without the broadcast key. A consumer asking for a subscription that is a broadcast subscription
     * (by its stored property, whether or not the topic is loaded here) is refused with a message that says how to
     * join it: attached as a stock consumer it would receive, and acknowledge cumulatively, what belongs to the
     * broadcast consumers. When the topic is not loaded on this broker yet, it is loaded first (as the stock path
     * would) so that the stored subscription can be checked; every other stock subscribe goes straight through. The
     * check and the load are only for a client that may consume: stock loads a topic and answers about its
     * subscriptions only after authorizing (regression, fortieth session, found by a review: a role without CONSUME
     * learnt that a broadcast subscription existed and could make this broker load any topic it owns).
     */
    private void handleStockSubscribe(CommandSubscribe subscribe) {
        TopicName topicName = SubscribePreparation.persistentTopicName(subscribe.getTopic());
        if (topicName == null) {
            super.handleSubscribe(subscribe); // stock reports an invalid name; non-persistent topics have no broadcast
            return;
        }
        PersistentSubscription existing = preparation.loadedSubscription(topicName, subscribe.getSubscription());
        boolean loaded = existing != null || getBrokerService().getTopicReference(topicName.toString()).isPresent();
        if (loaded && (existing == null || !BroadcastSubscription.isMarkedBroadcast(existing))) {
            super.handleSubscribe(subscribe); // nothing to refuse: stock authorizes and subscribes
            return;
        }
        holdAndAuthorize(topicName, subscribe, (copy, hold) ->
                getBrokerService().getTopicIfExists(topicName.toString()).whenComplete((topic, error) ->
                        resume(copy, hold, () -> subscribeUnlessBroadcast(copy, error == null ? topic : null))));
    }

    private void subscribeUnlessBroadcast(CommandSubscribe copy, Optional<Topic> topic) {
        PersistentSubscription stored = topic != null && topic.isPresent() && topic.get() instanceof PersistentTopic
                ? ((PersistentTopic) topic.get()).getSubscriptions().get(copy.getSubscription()) : null;
        if (!answers.refuseIfBroadcast(stored, copy)) {
            super.handleSubscribe(copy); // a lookup error is reported there, as stock does
        }
    }

    @Override
    public InitialPosition takeBroadcastJoin(long consumerId) {
        return pendingJoins.take(consumerId);
    }

    @Override
    public void registerBroadcastConsumer(long consumerId, BroadcastConsumer consumer) {
        broadcastConsumers.put(consumerId, consumer);
    }

    @Override
    public void forgetBroadcastConsumer(long consumerId, BroadcastConsumer consumer) {
        broadcastConsumers.remove(consumerId, consumer);
    }

    @Override
    public CompletableFuture<Boolean> probeLiveness(long timeoutMs) {
        return liveness.probe(ctx(), getRemoteEndpointProtocolVersion() >= ProtocolVersion.v1.getValue(), timeoutMs);
    }

    /** Every frame from the client answers a pending liveness probe; then the stock decoding. Event loop. */
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        liveness.frameRead();
        super.channelRead(ctx, msg);
    }

    @Override
    public void submit(ConnectionSend send) {
        ctx().executor().execute(send);
    }

    @Override
    public void reachedEndOfTopic(long consumerId) {
        getCommandSender().sendReachedEndOfTopic(consumerId);
    }

    @Override
    protected void handleCloseConsumer(CommandCloseConsumer closeConsumer) {
        held.cancel(closeConsumer.getConsumerId());
        pendingJoins.forget(closeConsumer.getConsumerId());
        super.handleCloseConsumer(closeConsumer);
    }

    /**
     * Whether stock still holds the subscribe of {@code consumerId}: its consumer future is on this connection and did
     * not fail (a refusal removes it or fails it; one that completed keeps its join until the safety net of
     * {@code consumerCreated}, which stock calls after completing it, takes it, or until the consumer closes).
     */
    private boolean subscribeInFlight(long consumerId) {
        CompletableFuture<?> created = getConsumers().get(consumerId);
        return created != null && !created.isCompletedExceptionally();
    }

    /** Broadcast subscribes prepared here whose consumer has not attached yet (for tests). */
    public int pendingJoinCount() {
        return pendingJoins.size();
    }

    // ----- flow, ack, seek -----

    @Override
    protected void handleFlow(CommandFlow flow) {
        BroadcastConsumer bc = broadcastConsumers.get(flow.getConsumerId());
        if (bc == null) {
            super.handleFlow(flow);
            return;
        }
        if (log.isDebugEnabled()) {
            log.debug("[{}] Flow {} for broadcast consumer {}", getRemoteAddress(), flow.getMessagePermits(), bc);
        }
        bc.flow(flow.getMessagePermits());
    }

    @Override
    protected void handleAck(CommandAck ack) {
        BroadcastConsumer bc = broadcastConsumers.get(ack.getConsumerId());
        if (bc == null) {
            super.handleAck(ack); // stock consumers, and ids this connection does not know (stock drops them)
            return;
        }
        if (service.config().acksOnEventLoop()) {
            AckCopy.apply(ack, bc, this); // as stock Pulsar: on this event loop, TCP back-pressure bounds them
            return;
        }
        AckCopy copy = AckCopy.of(ack);
        // Acks need no ordering: a random thread, never behind the dispatch work of any subscription. The gate
        // bounds how many wait (see AckGate).
        ackGate.submit(() -> copy.applyTo(bc, this), service.executor()::executeUnordered);
    }

    /**
     * A seek of a broadcast consumer is refused: it would reset the subscription for every consumer. Asked of the
     * routing and of stock's consumer, whose subscription says it too when the routing lost the id (two attaches of
     * one id overlapping: a review, forty-sixth session).
     */
    @Override
    protected void handleSeek(CommandSeek seek) {
        CompletableFuture<org.apache.pulsar.broker.service.Consumer> stock = getConsumers().get(seek.getConsumerId());
        if (broadcastConsumers.containsKey(seek.getConsumerId()) || (stock != null && stock.isDone()
                && !stock.isCompletedExceptionally()
                && stock.join().getSubscription() instanceof BroadcastSubscription)) {
            getCommandSender().sendErrorResponse(seek.getRequestId(), ServerError.NotAllowedError,
                    "Seek is not supported on a broadcast subscription: it would move every consumer; use"
                            + " 'pulsar-admin topics reset-cursor' to move the whole subscription");
            return;
        }
        super.handleSeek(seek);
    }
}
