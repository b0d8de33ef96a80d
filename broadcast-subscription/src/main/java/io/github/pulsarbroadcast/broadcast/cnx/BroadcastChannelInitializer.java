package io.github.pulsarbroadcast.broadcast.cnx;

import io.github.pulsarbroadcast.broadcast.BroadcastConfig;
import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.broker.service.PulsarChannelInitializer;
import org.apache.pulsar.broker.service.ServerCnx;

/**
 * Builds the broker's Netty pipeline exactly as stock Pulsar does (TLS, frame decoder, flow control) and differs
 * only in the last handler: a {@link BroadcastServerCnx} instead of a plain {@link ServerCnx}.
 *
 * <p>Threading: created once per listener at broker start; {@link #newServerCnx} runs on Netty accept threads and
 * only reads final fields.
 */
public final class BroadcastChannelInitializer extends PulsarChannelInitializer {

    private final BroadcastConfig config;

    private BroadcastChannelInitializer(PulsarService pulsar, PulsarChannelOptions opts, BroadcastConfig config)
            throws Exception {
        super(pulsar, opts);
        this.config = config;
    }

    /** The factory handed to {@code BrokerService.setPulsarChannelInitializerFactory}. */
    public static Factory factory(BroadcastConfig config) {
        return (pulsar, opts) -> new BroadcastChannelInitializer(pulsar, opts, config);
    }

    @Override
    protected ServerCnx newServerCnx(PulsarService pulsar, String listenerName) {
        return new BroadcastServerCnx(pulsar, listenerName, config);
    }
}
