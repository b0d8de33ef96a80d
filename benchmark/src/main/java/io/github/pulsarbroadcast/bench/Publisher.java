package io.github.pulsarbroadcast.bench;

import java.util.BitSet;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;

/**
 * The one producer: publishes {@code totalMessages} messages of {@code messageSize} bytes at a fixed rate, each
 * carrying its sequence number as the message's sequence id (see {@link Deliveries#sequenceOf}). Message {@code k}
 * is sent at {@code start + k / rate}; the first {@code warmupMessages} are the warm-up.
 *
 * <p>Threading: one scheduler thread ("bench-publisher") sends; send completions run on the producer client's
 * threads and update the atomics and {@link #acked} (guarded by itself); the main thread polls.
 */
final class Publisher implements AutoCloseable {

    private final Producer<byte[]> producer;
    private final byte[] payload;
    private final int totalMessages;
    private final long periodNanos;
    private final ScheduledExecutorService scheduler;
    private final AtomicInteger next = new AtomicInteger();
    private final AtomicInteger completed = new AtomicInteger();
    private final AtomicInteger failed = new AtomicInteger();
    private final AtomicReference<String> firstError = new AtomicReference<>();
    private final BitSet acked = new BitSet();
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    private volatile long startNanos;
    private volatile long lastSendNanos;
    private volatile ScheduledFuture<?> task;

    Publisher(PulsarClient client, String topic, BenchSettings s) throws PulsarClientException {
        this.producer = client.newProducer(Schema.BYTES)
                .topic(topic)
                .producerName("bench-producer")
                .enableBatching(s.batching)
                .batchingMaxPublishDelay(1, TimeUnit.MILLISECONDS)
                .blockIfQueueFull(true)
                .maxPendingMessages(1_000)
                .sendTimeout(30, TimeUnit.SECONDS)
                .create();
        this.payload = new byte[s.messageSize];
        new Random(42).nextBytes(payload);
        this.totalMessages = s.totalMessages();
        this.periodNanos = Math.max(1, Math.round(1e9 / s.rate));
        this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "bench-publisher");
            t.setDaemon(true);
            return t;
        });
    }

    /** Starts publishing now. */
    void start() {
        startNanos = System.nanoTime();
        task = scheduler.scheduleAtFixedRate(this::sendNext, 0, periodNanos, TimeUnit.NANOSECONDS);
    }

    long startNanos() {
        return startNanos;
    }

    private void sendNext() {
        int seq = next.getAndIncrement();
        if (seq >= totalMessages) {
            task.cancel(false);
            return;
        }
        lastSendNanos = System.nanoTime();
        producer.newMessage().value(payload).sequenceId(seq).sendAsync()
                .whenComplete((id, e) -> {
                    if (e == null) {
                        synchronized (acked) {
                            acked.set(seq);
                        }
                    } else {
                        failed.incrementAndGet();
                        firstError.compareAndSet(null, Errors.brief(e));
                    }
                    if (completed.incrementAndGet() == totalMessages) {
                        done.complete(null);
                    }
                });
    }

    /** Completes when every send has been acknowledged or has failed. */
    CompletableFuture<Void> done() {
        return done;
    }

    /** Messages handed to the producer so far. */
    int sent() {
        return Math.min(next.get(), totalMessages);
    }

    /** The highest sequence number handed to the producer so far, or -1. */
    int lastSentSeq() {
        return sent() - 1;
    }

    long lastSendNanos() {
        return lastSendNanos;
    }

    int failed() {
        return failed.get();
    }

    String firstError() {
        return firstError.get();
    }

    /** The sequence numbers the broker acknowledged (a copy). */
    BitSet acked() {
        synchronized (acked) {
            return (BitSet) acked.clone();
        }
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
        producer.closeAsync();
    }
}
