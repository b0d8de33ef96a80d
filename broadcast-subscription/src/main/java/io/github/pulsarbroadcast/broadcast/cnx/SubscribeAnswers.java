package io.github.pulsarbroadcast.broadcast.cnx;

import io.github.pulsarbroadcast.broadcast.BroadcastMode;
import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastSubscription;
import java.net.SocketAddress;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;
import org.apache.pulsar.broker.service.BrokerServiceException;
import org.apache.pulsar.broker.service.PulsarCommandSender;
import org.apache.pulsar.broker.service.persistent.PersistentSubscription;
import org.apache.pulsar.common.api.proto.CommandSubscribe;
import org.apache.pulsar.common.api.proto.ServerError;
import org.apache.pulsar.common.util.FutureUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The refusals {@link BroadcastServerCnx} answers a subscribe with itself (every other answer is stock's), each with
 * its log line: the error code and message a client sees are chosen here, in one place.
 *
 * <p>Threading: called on the connection's event loop; both fields are final, and {@link SubscribeFailures} is
 * thread-safe on its own.
 */
final class SubscribeAnswers {

    /** The connection handler's logger: these lines kept its name when they moved here. */
    private static final Logger log = LoggerFactory.getLogger(BroadcastServerCnx.class);

    /**
     * The connection's command sender, read when an answer is sent: stock makes it in {@code channelActive}, after the
     * connection handler is constructed (the first version took it in the constructor: null, and every refusal closed
     * the connection instead; caught by the integration suite, forty-fourth session).
     */
    private final Supplier<PulsarCommandSender> sender;
    private final SubscribeFailures failures;

    SubscribeAnswers(Supplier<PulsarCommandSender> sender, SubscribeFailures failures) {
        this.sender = sender;
        this.failures = failures;
    }

    /** As stock answers a subscribe whose consumer id is still being created on this connection. */
    void alreadyPresent(CommandSubscribe subscribe) {
        sender.get().sendErrorResponse(subscribe.getRequestId(), ServerError.ServiceNotReady,
                "Consumer is already present on the connection");
    }

    /** A broadcast subscribe whose command asks for something broadcast cannot give ({@code problem} says what). */
    void refused(String topic, CommandSubscribe subscribe, SocketAddress remote, String problem) {
        log.warn("[{}][{}] Refused broadcast subscribe from {}: {}", topic, subscribe.getSubscription(), remote,
                problem);
        sender.get().sendErrorResponse(subscribe.getRequestId(), ServerError.NotAllowedError, problem);
    }

    /** As stock: a failed authorization check (not just a "no") is an authorization error to the client. */
    void unauthorized(CommandSubscribe subscribe, String role, Throwable error) {
        Throwable cause = causeOf(error);
        log.warn("[{}][{}] Authorization check failed for role {}: {}", subscribe.getTopic(),
                subscribe.getSubscription(), role, cause.getMessage());
        sender.get().sendErrorResponse(subscribe.getRequestId(), ServerError.AuthorizationError, cause.getMessage());
    }

    /** The preparation of a broadcast subscribe failed: the client gets stock's error code for the cause. */
    void failed(CommandSubscribe subscribe, Throwable error) {
        Throwable cause = causeOf(error);
        failures.log(subscribe.getTopic(), subscribe.getSubscription(), cause);
        sender.get().sendErrorResponse(subscribe.getRequestId(), BrokerServiceException.getClientErrorCode(cause),
                cause.getMessage());
    }

    /**
     * Refuses a subscribe without the broadcast key to a subscription marked broadcast, with a message that says how
     * to join it; returns whether it refused.
     */
    boolean refuseIfBroadcast(PersistentSubscription subscription, CommandSubscribe subscribe) {
        if (subscription == null || !BroadcastSubscription.isMarkedBroadcast(subscription)) {
            return false;
        }
        log.warn("[{}][{}] Refused consumer {} without {}: the subscription is a broadcast subscription",
                subscribe.getTopic(), subscribe.getSubscription(), subscribe.getConsumerName(), BroadcastMode.KEY);
        sender.get().sendErrorResponse(subscribe.getRequestId(), ServerError.NotAllowedError,
                BroadcastMode.howToJoin(subscribe.getSubscription()));
        return true;
    }

    /** The failure a future completed with, out of its {@link CompletionException}. */
    private static Throwable causeOf(Throwable error) {
        return FutureUtil.unwrapCompletionException(error);
    }
}
