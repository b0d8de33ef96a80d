package io.github.pulsarbroadcast.it;

import io.netty.buffer.ByteBuf;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import javax.servlet.ServletRequest;
import javax.servlet.ServletResponse;
import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.broker.intercept.BrokerInterceptor;
import org.apache.pulsar.broker.service.Consumer;
import org.apache.pulsar.broker.service.ServerCnx;
import org.apache.pulsar.common.api.proto.BaseCommand;
import org.apache.pulsar.common.api.proto.CommandAck;
import org.apache.pulsar.common.intercept.InterceptException;

/**
 * A second broker interceptor, as an operator's auditing or tracing interceptor beside the plugin: counts, by
 * subscription name, the consumers created, the messages dispatched and the acknowledgements it is told of. Loaded
 * from a NAR of its own ({@code BroadcastWithAnotherInterceptorTest} builds it), through the stock loader.
 *
 * <p>Threading: called on the broker's event loops and dispatch threads at once; the counts are concurrent maps of
 * {@link LongAdder}s, static so that the test reads what the broker's instance counted.
 */
public class CountingInterceptor implements BrokerInterceptor {

    static final String NAME = "counting";

    private static final Map<String, LongAdder> CREATED = new ConcurrentHashMap<>();
    private static final Map<String, LongAdder> DISPATCHED = new ConcurrentHashMap<>();
    private static final Map<String, LongAdder> ACKED = new ConcurrentHashMap<>();

    static long created(String subscription) {
        return count(CREATED, subscription);
    }

    static long dispatched(String subscription) {
        return count(DISPATCHED, subscription);
    }

    static long acked(String subscription) {
        return count(ACKED, subscription);
    }

    private static long count(Map<String, LongAdder> counts, String subscription) {
        LongAdder n = counts.get(subscription);
        return n == null ? 0 : n.sum();
    }

    private static void add(Map<String, LongAdder> counts, Consumer consumer) {
        counts.computeIfAbsent(consumer.getSubscription().getName(), k -> new LongAdder()).increment();
    }

    @Override
    public void consumerCreated(ServerCnx cnx, Consumer consumer, Map<String, String> metadata) {
        add(CREATED, consumer);
    }

    @Override
    public void messageDispatched(ServerCnx cnx, Consumer consumer, long ledgerId, long entryId,
            ByteBuf headersAndPayload) {
        add(DISPATCHED, consumer);
    }

    @Override
    public void messageAcked(ServerCnx cnx, Consumer consumer, CommandAck ackCmd) {
        add(ACKED, consumer);
    }

    @Override
    public void onPulsarCommand(BaseCommand command, ServerCnx cnx) throws InterceptException {
    }

    @Override
    public void onConnectionClosed(ServerCnx cnx) {
    }

    @Override
    public void onWebserviceRequest(ServletRequest request) {
    }

    @Override
    public void onWebserviceResponse(ServletRequest request, ServletResponse response) {
    }

    @Override
    public void initialize(PulsarService pulsarService) {
    }

    @Override
    public void close() {
    }
}
