package io.github.pulsarbroadcast.broadcast;

import io.github.pulsarbroadcast.executor.SubscriptionOrderedExecutor;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import org.apache.pulsar.broker.PulsarService;

/**
 * What the plugin owns on one broker: its configuration, the subscription-keyed executor that runs broadcast
 * dispatch (ordered per subscription) and acknowledgements (on random threads), and the broker's scheduler for
 * periodic work.
 *
 * <p>Threading: immutable references, created in {@code BroadcastBrokerInterceptor#initialize} before any
 * connection exists and shared by every connection and subscription; {@link #close} runs once at broker shut-down.
 */
public final class BroadcastService implements AutoCloseable {

    private final PulsarService pulsar;
    private final BroadcastConfig config;
    private final SubscriptionOrderedExecutor executor;
    private final boolean onlyInterceptor;
    private final WindowBudget windowBudget;

    public BroadcastService(PulsarService pulsar, BroadcastConfig config) {
        this.pulsar = pulsar;
        this.config = config;
        // The plugin is loaded as a broker interceptor, so the configured set holds at least its own name.
        this.onlyInterceptor = pulsar.getConfiguration().getBrokerInterceptors().size() <= 1;
        this.windowBudget = new WindowBudget(config.windowBrokerMaxBytes());
        this.executor = SubscriptionOrderedExecutor.builder()
                .name("broadcast-dispatch")
                .numThreads(config.executorThreads())
                .build();
    }

    public PulsarService pulsar() {
        return pulsar;
    }

    public BroadcastConfig config() {
        return config;
    }

    /** Runs dispatch work ordered per subscription, and acknowledgements unordered. */
    public SubscriptionOrderedExecutor executor() {
        return executor;
    }

    /**
     * Whether the plugin is the broker's only interceptor. Only then may broadcast sends skip the stock per-message
     * interceptor calls ({@code onPulsarCommand}, {@code messageDispatched}), whose only listener would be the
     * plugin itself, which ignores them.
     */
    public boolean onlyInterceptor() {
        return onlyInterceptor;
    }

    /** The bytes all broadcast windows of this broker may hold together. */
    public WindowBudget windowBudget() {
        return windowBudget;
    }

    /** The broker's shared scheduler, for periodic per-subscription work (which then hops to {@link #executor}). */
    public ScheduledExecutorService scheduler() {
        return pulsar.getExecutor();
    }

    @Override
    public void close() {
        executor.shutdown(Duration.ofSeconds(10));
    }
}
