package io.github.pulsarbroadcast.broadcast.cnx;

import io.github.pulsarbroadcast.broadcast.BroadcastService;
import io.github.pulsarbroadcast.broadcast.dispatch.SubscriptionInstaller;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.flush.FlushConsolidationHandler;
import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.broker.service.PulsarChannelInitializer;
import org.apache.pulsar.broker.service.ServerCnx;

/**
 * Builds the broker's Netty pipeline as stock Pulsar 2.10 does (TLS, frame decoder, flow control) with two
 * differences: the last handler is a {@link BroadcastServerCnx} instead of a plain {@link ServerCnx}, and the first
 * is Netty's {@link FlushConsolidationHandler}, where later Pulsar versions put it (same settings): the responses of
 * one read and those completed on other threads (subscribes, lookups, ack receipts of up to hundreds of consumers
 * sharing a connection) go out in one flush per event-loop turn, at most {@value #FLUSH_AFTER_FLUSHES} held back.
 * The dispatcher's own flush, once per connection and pass, goes past it ({@code ConnectionSend}): held back to the
 * next turn it would wait for every other connection's send of the pass (benchmarks.md, "Broker performance
 * (issue 12)", experiment 6).
 *
 * <p>Threading: created once per listener at broker start; {@link #newServerCnx} runs on Netty accept threads and
 * only reads final fields.
 */
public final class BroadcastChannelInitializer extends PulsarChannelInitializer {

    /** Flushes gathered at most before one goes through (the value later Pulsar versions use). */
    static final int FLUSH_AFTER_FLUSHES = 1024;

    private final BroadcastService service;
    private final SubscriptionInstaller installer;
    private final SubscribeFailures failures;

    private BroadcastChannelInitializer(PulsarService pulsar, PulsarChannelOptions opts, BroadcastService service,
                                        SubscriptionInstaller installer, SubscribeFailures failures) throws Exception {
        super(pulsar, opts);
        this.service = service;
        this.installer = installer;
        this.failures = failures;
    }

    /**
     * The factory handed to {@code BrokerService.setPulsarChannelInitializerFactory}. Every connection of the broker
     * (of every listener) shares one {@link SubscriptionInstaller}, so that the subscribes that arrive together after
     * a topic move, over many connections, wait for one load of the saved positions (with one per connection, 1,000
     * connections of 100,000 consumers started hundreds of loads of a 3.6 MB snapshot, measured), and one
     * {@link SubscribeFailures}, which keeps a storm of failed subscribes out of the WARN log. {@code installer} is
     * the broker's one, which the admin calls' preparation shares.
     */
    public static Factory factory(BroadcastService service, SubscriptionInstaller installer) {
        SubscribeFailures failures = new SubscribeFailures(System::nanoTime);
        return (pulsar, opts) -> new BroadcastChannelInitializer(pulsar, opts, service, installer, failures);
    }

    @Override
    protected void initChannel(SocketChannel ch) throws Exception {
        ch.pipeline().addLast("consolidation", new FlushConsolidationHandler(FLUSH_AFTER_FLUSHES, true));
        super.initChannel(ch);
    }

    @Override
    protected ServerCnx newServerCnx(PulsarService pulsar, String listenerName) {
        return new BroadcastServerCnx(pulsar, listenerName, service, installer, failures);
    }
}
