package io.github.pulsarbroadcast.bench.fleet;

import io.netty.channel.EventLoop;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.pulsar.common.api.proto.CommandLookupTopicResponse;
import org.apache.pulsar.common.api.proto.CommandLookupTopicResponse.LookupType;
import org.apache.pulsar.common.api.proto.ServerError;
import org.apache.pulsar.common.protocol.Commands;

/**
 * What one stock {@code PulsarClient} with one connection per broker would be: the consumers that share a
 * connection ({@code --consumers-per-connection}), their request and consumer ids, and their connections, one per
 * broker address (normally the one to the service URL, which then also carries the lookups). A consumer's way to its
 * subscribe is the stock client's: PARTITIONED_METADATA, then LOOKUP (following redirects, at most
 * {@value #MAX_REDIRECTS}), then SUBSCRIBE on the connection to the broker that owns the topic (through the service
 * URL when the lookup says to proxy); with lookups off, straight to SUBSCRIBE on the service URL's connection.
 *
 * <p>Threading: every method runs on {@link #loop()}, the event loop of all of the group's connections; no field
 * needs a lock.
 */
final class ClientGroup {

    private static final int MAX_REDIRECTS = 10;

    private final FleetEngine engine;
    private final EventLoop loop;
    private final int connectionIndex;
    private final Map<String, FleetHandler> channels = new HashMap<>();
    private final Map<FleetHandler, String> keys = new HashMap<>();
    private long nextRequestId;
    /** The service URL's host of the last lookup (the next takes the one after it; groups start spread out). */
    private int nextService;

    ClientGroup(FleetEngine engine, EventLoop loop, int connectionIndex) {
        this.engine = engine;
        this.loop = loop;
        this.connectionIndex = connectionIndex;
        this.nextService = connectionIndex;
    }

    FleetEngine engine() {
        return engine;
    }

    EventLoop loop() {
        return loop;
    }

    EntryReader reader() {
        return engine.reader();
    }

    long newRequestId() {
        return nextRequestId++;
    }

    /** Finds the connection that {@code c} subscribes on and hands it to {@link SimConsumer#subscribeOn}. */
    void locate(SimConsumer c) {
        InetSocketAddress service = serviceAddress();
        if (!engine.spec().lookup) {
            withChannel(c, service, null, c::subscribeOn);
            return;
        }
        withChannel(c, service, null, h -> partitionedMetadata(c, h));
    }

    private void partitionedMetadata(SimConsumer c, FleetHandler h) {
        long requestId = newRequestId();
        h.request(Commands.newPartitionMetadataRequest(engine.spec().topic, requestId), requestId,
                new FleetHandler.Pending() {
                    @Override
                    void partitions(int partitions) {
                        if (partitions > 0) {
                            c.failedAttempt(ServerError.NotAllowedError, "partitioned topics are not simulated");
                        } else {
                            lookupTopic(c, h, false, 0);
                        }
                    }

                    @Override
                    void error(ServerError error, String message) {
                        c.failedAttempt(error, message);
                    }
                });
    }

    private void lookupTopic(SimConsumer c, FleetHandler h, boolean authoritative, int redirects) {
        long requestId = newRequestId();
        h.request(Commands.newLookup(engine.spec().topic, authoritative, requestId), requestId,
                new FleetHandler.Pending() {
                    @Override
                    void lookup(CommandLookupTopicResponse r) {
                        lookedUp(c, r, redirects);
                    }

                    @Override
                    void error(ServerError error, String message) {
                        c.failedAttempt(error, message);
                    }
                });
    }

    private void lookedUp(SimConsumer c, CommandLookupTopicResponse r, int redirects) {
        if (r.getResponse() == LookupType.Failed || !r.hasBrokerServiceUrl()) {
            c.failedAttempt(r.hasError() ? r.getError() : ServerError.UnknownError,
                    r.hasMessage() ? r.getMessage() : "lookup failed");
            return;
        }
        String url = r.getBrokerServiceUrl();
        boolean authoritative = r.isAuthoritative();
        boolean proxy = r.isProxyThroughServiceUrl();
        InetSocketAddress broker;
        try {
            broker = engine.address(url);
        } catch (IllegalArgumentException e) {
            c.failedAttempt(ServerError.UnknownError, e.getMessage());
            return;
        }
        if (r.getResponse() == LookupType.Redirect) {
            if (redirects >= MAX_REDIRECTS) {
                c.failedAttempt(ServerError.UnknownError, "more than " + MAX_REDIRECTS + " lookup redirects");
            } else if (proxy) {
                withChannel(c, serviceAddress(), url, h -> lookupTopic(c, h, authoritative, redirects + 1));
            } else {
                withChannel(c, broker, null, h -> lookupTopic(c, h, authoritative, redirects + 1));
            }
        } else if (proxy) {
            withChannel(c, serviceAddress(), url, c::subscribeOn);
        } else {
            withChannel(c, broker, null, c::subscribeOn);
        }
    }

    /**
     * One of the service URL's hosts for a lookup, each in turn: with several, a lookup that failed on a broker that
     * is gone goes to the next one on its retry, as the stock client's service-name resolver does.
     */
    private InetSocketAddress serviceAddress() {
        InetSocketAddress[] all = engine.serviceAddresses();
        if (all.length == 1) {
            return all[0];
        }
        nextService = (nextService + 1) % all.length;
        return all[nextService];
    }

    /** {@code pulsar://host:port} as a resolved address. */
    static InetSocketAddress address(String url) {
        URI uri = URI.create(url);
        if (uri.getHost() == null || uri.getPort() < 0) {
            throw new IllegalArgumentException("not a pulsar://host:port URL: " + url);
        }
        return new InetSocketAddress(uri.getHost(), uri.getPort());
    }

    /** Runs {@code then} with the group's connection to {@code address} (via {@code proxyTarget}), opened if needed. */
    private void withChannel(SimConsumer c, InetSocketAddress address, String proxyTarget,
            Consumer<FleetHandler> then) {
        String key = address + (proxyTarget == null ? "" : " via " + proxyTarget);
        FleetHandler h = channels.get(key);
        if (h == null || !h.isOpen()) {
            h = engine.open(this, address, proxyTarget, connectionIndex);
            channels.put(key, h);
            keys.put(h, key);
        }
        h.whenReady(c, then);
    }

    /** {@code h} is gone: the next consumer that needs its broker opens a new connection. */
    void channelClosed(FleetHandler h) {
        String key = keys.remove(h);
        if (key != null && channels.get(key) == h) {
            channels.remove(key);
        }
    }

    /** Closes every connection of the group. */
    void closeAll() {
        for (FleetHandler h : channels.values().toArray(new FleetHandler[0])) {
            h.close();
        }
    }
}
