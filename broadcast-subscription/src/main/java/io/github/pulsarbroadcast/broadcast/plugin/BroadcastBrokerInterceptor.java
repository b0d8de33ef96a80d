package io.github.pulsarbroadcast.broadcast.plugin;

import io.github.pulsarbroadcast.broadcast.BroadcastConfig;
import io.github.pulsarbroadcast.broadcast.BroadcastMode;
import io.github.pulsarbroadcast.broadcast.BroadcastService;
import io.github.pulsarbroadcast.broadcast.admin.AdminCallPreparation;
import io.github.pulsarbroadcast.broadcast.cnx.BroadcastChannelInitializer;
import io.github.pulsarbroadcast.broadcast.cnx.BroadcastServerCnx;
import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastSubscription;
import io.github.pulsarbroadcast.broadcast.dispatch.SubscriptionInstaller;
import java.io.IOException;
import java.util.Map;
import javax.servlet.ServletException;
import javax.servlet.ServletRequest;
import javax.servlet.ServletResponse;
import javax.servlet.http.HttpServletRequest;
import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.broker.intercept.BrokerInterceptor;
import io.github.pulsarbroadcast.broadcast.prometheus.BroadcastMetricsProvider;
import org.apache.pulsar.broker.service.Consumer;
import org.apache.pulsar.broker.service.Producer;
import org.apache.pulsar.broker.service.Topic;
import org.apache.pulsar.broker.service.ServerCnx;
import org.apache.pulsar.common.api.proto.BaseCommand;
import org.apache.pulsar.common.intercept.InterceptException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The plugin's entry point: a {@link BrokerInterceptor} that a stock Pulsar 2.10 broker loads from the NAR named in
 * {@code brokerInterceptors}. Its main job is in {@link #initialize}: it installs the plugin's connection handler
 * before the broker binds its ports, and registers the plugin's metrics on the broker's {@code /metrics}. Of the
 * per-command callbacks, {@link #consumerCreated} checks consumers and {@link #messageProduced} times publishes;
 * {@link #onWebserviceRequest} serves a broadcast subscription before an admin call changes it
 * ({@link AdminCallPreparation}).
 *
 * <p>It also checks every new consumer ({@link #consumerCreated}).
 *
 * <p>Threading: {@link #initialize} and {@link #close} run once, on the broker's start-up and shut-down threads;
 * the callbacks run on Netty and web threads and touch no state. {@link #service} is written once in
 * {@code initialize} before any connection exists and is volatile for {@link #close}.
 */
public class BroadcastBrokerInterceptor implements BrokerInterceptor {

    private static final Logger log = LoggerFactory.getLogger(BroadcastBrokerInterceptor.class);

    /** Single writer ({@link #initialize}); volatile for {@link #close}. Null while disabled. */
    private volatile BroadcastService service;
    /** Single writer ({@link #initialize}), before the web service starts. Null while disabled. */
    private volatile AdminCallPreparation adminCalls;

    @Override
    public void initialize(PulsarService pulsar) {
        BroadcastConfig cfg = BroadcastConfig.from(pulsar.getConfiguration().getProperties());
        if (!cfg.enabled()) {
            log.info("pulsar-broadcast loaded but disabled ({}): every command goes to stock Pulsar", cfg);
            return;
        }
        BroadcastService svc = new BroadcastService(pulsar, cfg);
        this.service = svc;
        SubscriptionInstaller installer = new SubscriptionInstaller(svc);
        this.adminCalls = new AdminCallPreparation(pulsar, installer);
        pulsar.getBrokerService().setPulsarChannelInitializerFactory(
                BroadcastChannelInitializer.factory(svc, installer));
        pulsar.addPrometheusRawMetricsProvider(new BroadcastMetricsProvider(pulsar, svc));
        log.info("pulsar-broadcast installed its connection handler ({})", cfg);
    }

    /**
     * Safety net after every successful subscribe: a consumer that asked for broadcast but was attached to a plain
     * subscription (the topic was unloaded and loaded again between the plugin's preparation and the stock attach)
     * still has its join request pending. It is disconnected, and its client reconnects through the broadcast path.
     */
    @Override
    public void consumerCreated(ServerCnx cnx, Consumer consumer, Map<String, String> metadata) {
        if (service == null) {
            // Disabled (broadcastEnabled=false): stock Failover for every consumer, as documented. Disconnecting
            // consumers of a broadcast subscription here put every one of them in an endless reconnect loop.
            return;
        }
        if (cnx instanceof BroadcastServerCnx
                && ((BroadcastServerCnx) cnx).takeBroadcastJoin(consumer.consumerId()) != null) {
            log.warn("[{}][{}] Broadcast consumer {} was attached to a plain subscription; disconnecting it so that"
                    + " it reconnects as broadcast", consumer.getSubscription().getTopicName(),
                    consumer.getSubscription().getName(), consumer.consumerName());
            consumer.disconnect();
        } else if (BroadcastSubscription.isMarkedButNotServed(consumer.getSubscription())) {
            // The connection handler refuses these; only a topic reloaded between its check and the attach gets here.
            log.warn("[{}][{}] Consumer {} without {} was attached to a broadcast subscription; disconnecting it",
                    consumer.getSubscription().getTopicName(), consumer.getSubscription().getName(),
                    consumer.consumerName(), BroadcastMode.KEY);
            consumer.disconnect();
        }
    }

    /**
     * Records the "broker receive to persisted" stage of topics with a broadcast subscription (one map lookup per
     * publish for the others). Runs on the producer's connection thread once the write is persisted.
     */
    @Override
    public void messageProduced(ServerCnx cnx, Producer producer, long startTimeNs, long ledgerId, long entryId,
                                Topic.PublishContext publishContext) {
        BroadcastService svc = service;
        if (svc != null && startTimeNs > 0) {
            svc.publishLatencies().record(producer.getTopic().getName(), System.nanoTime() - startTimeNs);
        }
    }

    @Override
    public void onPulsarCommand(BaseCommand command, ServerCnx cnx) {
        // Not used: broadcast commands are routed by the connection handler itself.
    }

    @Override
    public void onConnectionClosed(ServerCnx cnx) {
        // Not used.
    }

    @Override
    public void onWebserviceRequest(ServletRequest request)
            throws IOException, ServletException, InterceptException {
        AdminCallPreparation calls = adminCalls;
        if (calls != null && request instanceof HttpServletRequest) {
            calls.prepare((HttpServletRequest) request);
        }
    }

    @Override
    public void onWebserviceResponse(ServletRequest request, ServletResponse response)
            throws IOException, ServletException {
        // Not used.
    }

    @Override
    public void close() {
        BroadcastService svc = service;
        if (svc != null) {
            svc.close();
        }
        log.info("pulsar-broadcast interceptor closed");
    }
}
