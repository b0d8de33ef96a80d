package io.github.pulsarbroadcast.broadcast.cnx;

import io.github.pulsarbroadcast.broadcast.BroadcastConfig;
import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.broker.service.ServerCnx;

/**
 * One client connection. Subscribe, ack, flow, redeliver and close commands of broadcast consumers are routed to
 * the plugin; every other command, and every command of a stock consumer, goes to {@link ServerCnx} unchanged.
 *
 * <p>Threading: like {@link ServerCnx}, every {@code handle*} method runs on this connection's Netty event-loop
 * thread.
 */
public class BroadcastServerCnx extends ServerCnx {

    private final BroadcastConfig config;

    public BroadcastServerCnx(PulsarService pulsar, String listenerName, BroadcastConfig config) {
        super(pulsar, listenerName);
        this.config = config;
    }

    /** The plugin configuration this connection was created with. */
    public BroadcastConfig config() {
        return config;
    }
}
