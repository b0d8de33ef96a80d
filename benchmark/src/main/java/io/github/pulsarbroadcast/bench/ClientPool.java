package io.github.pulsarbroadcast.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;

/**
 * The {@link PulsarClient}s of one run: one per {@code consumersPerClient} consumers (each with one I/O thread, one
 * listener thread and one connection to the broker, stats off), plus one for the producer, so that the producer's
 * sends never queue behind consumer traffic.
 *
 * <p>Threading: built and closed by the main thread; {@link #forConsumer} is called by the main thread only. The
 * clients themselves are thread-safe; {@link #abandon} shuts them down on short-lived daemon threads.
 */
final class ClientPool implements AutoCloseable {

    private final List<PulsarClient> consumerClients = new ArrayList<>();
    private final PulsarClient producerClient;
    private final int consumersPerClient;

    ClientPool(String serviceUrl, int consumers, BenchSettings s) throws PulsarClientException {
        this.consumersPerClient = s.consumersPerClient;
        int count = (consumers + s.consumersPerClient - 1) / s.consumersPerClient;
        try {
            for (int i = 0; i < count; i++) {
                consumerClients.add(newClient(serviceUrl, s));
            }
            producerClient = newClient(serviceUrl, s);
        } catch (PulsarClientException e) {
            close();
            throw e;
        }
    }

    private static PulsarClient newClient(String serviceUrl, BenchSettings s) throws PulsarClientException {
        return PulsarClient.builder()
                .serviceUrl(serviceUrl)
                .ioThreads(1)
                .listenerThreads(1)
                .connectionsPerBroker(1)
                .statsInterval(0, TimeUnit.SECONDS)
                // A subscribe keeps retrying until this; under load it is the connect time-out's business to give up.
                .operationTimeout(Math.max(30, s.connectTimeoutSeconds), TimeUnit.SECONDS)
                .connectionTimeout(30, TimeUnit.SECONDS)
                .maxConcurrentLookupRequests(Math.max(5_000, s.connectConcurrency))
                .maxLookupRequests(Math.max(50_000, s.connectConcurrency * 2))
                .build();
    }

    int size() {
        return consumerClients.size();
    }

    /** The client of consumer {@code index}: consecutive blocks of {@code consumersPerClient}. */
    PulsarClient forConsumer(int index) {
        return consumerClients.get(index / consumersPerClient);
    }

    PulsarClient forProducer() {
        return producerClient;
    }

    /**
     * Starts closing every client and returns without waiting: the consumers are closed already (see
     * {@link JavaConsumers#close}), and what is left is each client's two-second event-loop quiet period.
     */
    void closeInBackground() {
        for (PulsarClient c : all()) {
            c.closeAsync().exceptionally(e -> {
                try {
                    c.shutdown();
                } catch (PulsarClientException ignored) {
                    // nothing more to do
                }
                return null;
            });
        }
    }

    /**
     * Drops every client without closing its consumers one by one, for a broker that is about to be stopped
     * anyway: each client's shutdown (connections, threads) runs on a daemon thread of its own.
     */
    void abandon() {
        for (PulsarClient c : all()) {
            Thread t = new Thread(() -> {
                try {
                    c.shutdown();
                } catch (PulsarClientException ignored) {
                    // already closed or broken
                }
            }, "bench-client-shutdown");
            t.setDaemon(true);
            t.start();
        }
    }

    /** Closes every client (each closes its consumers first) and waits for it. */
    void closeAndWait(long seconds) {
        List<CompletableFuture<Void>> closing = new ArrayList<>();
        for (PulsarClient c : all()) {
            closing.add(c.closeAsync());
        }
        try {
            CompletableFuture.allOf(closing.toArray(new CompletableFuture<?>[0])).get(seconds, TimeUnit.SECONDS);
        } catch (Exception e) {
            for (PulsarClient c : all()) {
                try {
                    c.shutdown();
                } catch (PulsarClientException ignored) {
                    // already closed or broken
                }
            }
        }
    }

    private List<PulsarClient> all() {
        List<PulsarClient> all = new ArrayList<>(consumerClients);
        if (producerClient != null) {
            all.add(producerClient);
        }
        return all;
    }

    @Override
    public void close() {
        closeAndWait(120);
    }
}
