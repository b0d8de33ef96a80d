package io.github.pulsarbroadcast.broadcast.cnx;

import io.github.pulsarbroadcast.broadcast.BroadcastService;
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

    private final BroadcastService service;

    private BroadcastChannelInitializer(PulsarService pulsar, PulsarChannelOptions opts, BroadcastService service)
            throws Exception {
        super(pulsar, opts);
        this.service = service;
    }

    /** The factory handed to {@code BrokerService.setPulsarChannelInitializerFactory}. */
    public static Factory factory(BroadcastService service) {
        return (pulsar, opts) -> new BroadcastChannelInitializer(pulsar, opts, service);
    }

    @Override
    protected ServerCnx newServerCnx(PulsarService pulsar, String listenerName) {
        return new BroadcastServerCnx(pulsar, listenerName, service);
    }
}
