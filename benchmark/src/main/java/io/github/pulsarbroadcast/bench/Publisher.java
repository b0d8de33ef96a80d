package io.github.pulsarbroadcast.bench;

import io.github.pulsarbroadcast.bench.core.Percentiles;
import java.util.BitSet;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;

/**
 * The one producer: publishes {@code totalMessages} messages of {@code messageSize} bytes at a fixed rate, each
 * carrying its sequence number as the message's sequence id and its <em>intended</em> send time (start + k x period,
 * {@link System#nanoTime}) as the event time, both metadata fields every client decodes anyway. The producer never
 * blocks ({@code blockIfQueueFull(false)}): a send that finds 1,000 pending is refused and counted, and a send that
 * runs late (the scheduler runs late sends back to back) shows up in the send lag and in every latency, which count
 * from the intended time.
 *
 * <p>Threading: one scheduler thread ("bench-publisher") sends; send completions run on the producer client's
 * threads and update the atomics and {@link #acked} (guarded by itself); {@link #lag} is a {@link Recorder} (written
 * by the scheduler thread, read by the main thread); the main thread polls.
 */
final class Publisher implements MessageSource {

    private final Producer<byte[]> producer;
    private final byte[] payload;
    private final int totalMessages;
    private final int warmupMessages;
    private final long periodNanos;
    private final ScheduledExecutorService scheduler;
    private final AtomicInteger next = new AtomicInteger();
    private final AtomicInteger completed = new AtomicInteger();
    private final AtomicInteger failed = new AtomicInteger();
    private final AtomicInteger rejected = new AtomicInteger();
    private final AtomicReference<String> firstError = new AtomicReference<>();
    private final BitSet acked = new BitSet();
    private final Recorder lag = new Recorder(3);
    private final Histogram lagTotal = new Histogram(3);
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    private volatile long startNanos;
    private volatile long lastSendNanos;
    private volatile long firstMeasuredSendNanos;
    private volatile int sentLimit;
    private volatile ScheduledFuture<?> task;

    Publisher(PulsarClient client, String topic, BenchSettings s) throws PulsarClientException {
        this.producer = client.newProducer(Schema.BYTES)
                .topic(topic)
                .producerName("bench-producer")
                .enableBatching(s.batching)
                .batchingMaxPublishDelay(1, TimeUnit.MILLISECONDS)
                .blockIfQueueFull(false)
                .maxPendingMessages(1_000)
                .sendTimeout(30, TimeUnit.SECONDS)
                .create();
        this.payload = new byte[s.messageSize];
        new Random(42).nextBytes(payload);
        this.totalMessages = s.totalMessages();
        this.warmupMessages = s.warmupMessages();
        this.sentLimit = totalMessages;
        this.periodNanos = Math.max(1, Math.round(1e9 / s.rate));
        this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "bench-publisher");
            t.setDaemon(true);
            return t;
        });
    }

    @Override
    public void start() {
        startNanos = System.nanoTime();
        task = scheduler.scheduleAtFixedRate(this::sendNext, 0, periodNanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public long startNanos() {
        return startNanos;
    }

    @Override
    public long intendedNanos(int seq) {
        return startNanos + seq * periodNanos;
    }

    private void sendNext() {
        int seq = next.get();
        if (seq >= sentLimit) {
            task.cancel(false);
            return;
        }
        long intended = intendedNanos(seq);
        long now = System.nanoTime();
        lag.recordValue(Math.max(0, TimeUnit.NANOSECONDS.toMillis(now - intended)));
        lastSendNanos = now;
        if (seq == warmupMessages) {
            firstMeasuredSendNanos = now;
        }
        var message = producer.newMessage().value(payload).sequenceId(seq);
        if (intended > 0) {
            message.eventTime(intended);
        }
        message.sendAsync().whenComplete((id, e) -> completed(seq, e));
        next.incrementAndGet();
    }

    private void completed(int seq, Throwable e) {
        if (e == null) {
            synchronized (acked) {
                acked.set(seq);
            }
        } else {
            failed.incrementAndGet();
            if (e instanceof PulsarClientException.ProducerQueueIsFullError
                    || e.getCause() instanceof PulsarClientException.ProducerQueueIsFullError) {
                rejected.incrementAndGet();
            }
            firstError.compareAndSet(null, Errors.brief(e));
        }
        if (completed.incrementAndGet() >= sentLimit) {
            done.complete(null);
        }
    }

    @Override
    public CompletableFuture<Void> done() {
        return done;
    }

    @Override
    public int sent() {
        return Math.min(next.get(), totalMessages);
    }

    @Override
    public long lastSendNanos() {
        return lastSendNanos;
    }

    @Override
    public long firstMeasuredSendNanos() {
        return firstMeasuredSendNanos;
    }

    @Override
    public int failed() {
        return failed.get();
    }

    @Override
    public int rejected() {
        return rejected.get();
    }

    @Override
    public String firstError() {
        return firstError.get();
    }

    @Override
    public BitSet acked() {
        synchronized (acked) {
            return (BitSet) acked.clone();
        }
    }

    @Override
    public void stop() {
        if (task != null) {
            task.cancel(false);
        }
        scheduler.shutdown();
        try {
            scheduler.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        sentLimit = next.get();
        if (completed.get() >= sentLimit) {
            done.complete(null);
        }
    }

    @Override
    public synchronized Percentiles sendLag() {
        lagTotal.add(lag.getIntervalHistogram());
        return Percentiles.of(lagTotal);
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
        producer.closeAsync();
    }
}
