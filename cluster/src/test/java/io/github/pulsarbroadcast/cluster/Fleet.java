package io.github.pulsarbroadcast.cluster;

import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.MessageListener;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;

/**
 * The consumers of a chaos test: {@code consumers} broadcast consumers of one subscription, spread round-robin over
 * {@code clients} Pulsar clients (each its own connections, one I/O and one listener thread), each with a unique name
 * (so that a reconnect resumes its own virtual cursor) and a {@link Recorder}. Every message is acknowledged at once.
 * The reconnect back-off starts at the default 100 ms and doubles up to {@code maxBackoff}.
 *
 * <p>Threading: built and closed by the test thread; the clients' listener threads call the recorders.
 */
final class Fleet implements AutoCloseable {

    private final List<PulsarClient> clients = new ArrayList<>();
    private final Map<Recorder, Consumer<byte[]>> consumers = new ConcurrentHashMap<>();
    private final List<Recorder> recorders = new ArrayList<>();
    private final String topic;
    private final String subscription;

    private Fleet(String topic, String subscription) {
        this.topic = topic;
        this.subscription = subscription;
    }

    /** Connects the fleet; closes what it opened if that fails. */
    static Fleet connect(String serviceUrl, String topic, String subscription, int clientCount, int consumerCount,
                         Duration maxBackoff, Duration timeout) throws Exception {
        Fleet fleet = new Fleet(topic, subscription);
        try {
            for (int c = 0; c < clientCount; c++) {
                fleet.clients.add(PulsarClient.builder().serviceUrl(serviceUrl).ioThreads(1).listenerThreads(1)
                        .operationTimeout(30, TimeUnit.SECONDS)
                        .maxBackoffInterval(maxBackoff.toMillis(), TimeUnit.MILLISECONDS).build());
            }
            for (int i = 0; i < consumerCount; i++) {
                fleet.recorders.add(new Recorder(String.format("vehicle-%04d", i)));
            }
            fleet.subscribeAll(timeout);
            return fleet;
        } catch (Exception | Error e) {
            fleet.close();
            throw e;
        }
    }

    /** Subscribes every recorder's consumer under its own name (round-robin over the clients). */
    private void subscribeAll(Duration timeout) throws Exception {
        List<CompletableFuture<Consumer<byte[]>>> subscribing = new ArrayList<>();
        for (int i = 0; i < recorders.size(); i++) {
            Recorder recorder = recorders.get(i);
            subscribing.add(Broadcast.configure(clients.get(i % clients.size()).newConsumer())
                    .topic(topic).subscriptionName(subscription).consumerName(recorder.name())
                    .receiverQueueSize(20).messageListener(listener(recorder)).subscribeAsync()
                    .thenApply(consumer -> {
                        consumers.put(recorder, consumer);
                        return consumer;
                    }));
        }
        CompletableFuture.allOf(subscribing.toArray(new CompletableFuture[0]))
                .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * Closes every consumer (what a fleet's operator does before rolling the plugin back): nobody receives or
     * acknowledges until {@link #resume}; each consumer's position stays with the broadcast subscription.
     */
    void pause(Duration timeout) throws Exception {
        List<CompletableFuture<Void>> closing = new ArrayList<>();
        consumers.values().forEach(c -> closing.add(c.closeAsync()));
        CompletableFuture.allOf(closing.toArray(new CompletableFuture[0]))
                .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        consumers.clear();
    }

    /** Subscribes every consumer again under its own name, recording into the same {@link Recorder}s. */
    void resume(Duration timeout) throws Exception {
        subscribeAll(timeout);
    }

    private static MessageListener<byte[]> listener(Recorder recorder) {
        return (consumer, msg) -> {
            recorder.record(ByteBuffer.wrap(msg.getData()).getInt(), Millis.now());
            consumer.acknowledgeAsync(msg.getMessageId());
        };
    }

    List<Recorder> recorders() {
        return recorders;
    }

    /** The lowest {@link Recorder#firstMissing()} over the fleet: every consumer has every message below it. */
    int everyoneHasBelow() {
        int min = Integer.MAX_VALUE;
        for (Recorder r : recorders) {
            min = Math.min(min, r.firstMissing());
        }
        return min;
    }

    /** The lowest {@link Recorder#max()} over the fleet: every consumer has received this message or a later one. */
    int everyoneReached() {
        int min = Integer.MAX_VALUE;
        for (Recorder r : recorders) {
            min = Math.min(min, r.max());
        }
        return min;
    }

    /** {@link Recorder#rebase()} on every consumer. */
    void rebase() {
        recorders.forEach(Recorder::rebase);
    }

    /** How many consumers have received a message numbered {@code seq} or higher. */
    int receivedAtLeast(int seq) {
        int n = 0;
        for (Recorder r : recorders) {
            if (r.max() >= seq) {
                n++;
            }
        }
        return n;
    }

    /** One line about the consumers furthest behind, for a failure message. */
    String laggards(int limit) {
        List<Recorder> sorted = new ArrayList<>(recorders);
        sorted.sort((a, b) -> Integer.compare(a.firstMissing(), b.firstMissing()));
        StringBuilder sb = new StringBuilder();
        for (Recorder r : sorted.subList(0, Math.min(limit, sorted.size()))) {
            Consumer<byte[]> c = consumers.get(r);
            sb.append("\n  ").append(r).append(c == null ? ", no consumer" : c.isConnected() ? ", connected"
                    : ", not connected");
        }
        return sb.toString();
    }

    @Override
    public void close() {
        for (PulsarClient client : clients) {
            try {
                client.closeAsync().get(30, TimeUnit.SECONDS);
            } catch (Exception e) {
                try {
                    client.shutdown();
                } catch (PulsarClientException ignored) {
                    // best effort: the cluster goes away next
                }
            }
        }
        clients.clear();
    }
}
