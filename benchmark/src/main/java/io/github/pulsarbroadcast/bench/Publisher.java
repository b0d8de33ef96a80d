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
 * The one producer: publishes messages {@code firstSeq .. firstSeq + messages - 1} of {@code messageSize} bytes at a
 * fixed rate (a run publishes all its messages with one, a capacity step its slice), each
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
    private final boolean ownsProducer;
    private final byte[] payload;
    private final int firstSeq;
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

    /** The run's publisher: its own producer, every message of the run at the run's rate. */
    Publisher(PulsarClient client, String topic, BenchSettings s) throws PulsarClientException {
        this(producer(client, topic, s), true, s.messageSize, s.rate, 0, s.totalMessages(), s.warmupMessages());
    }

    /**
     * Messages {@code firstSeq ..} ({@code messages} of them, the first {@code warmupMessages} the warm-up) at
     * {@code rate} over {@code producer}, which {@link #close} closes only when {@code ownsProducer}.
     */
    Publisher(Producer<byte[]> producer, boolean ownsProducer, int messageSize, double rate, int firstSeq,
            int messages, int warmupMessages) {
        this.producer = producer;
        this.ownsProducer = ownsProducer;
        this.payload = new byte[messageSize];
        new Random(42).nextBytes(payload);
        this.firstSeq = firstSeq;
        this.totalMessages = messages;
        this.warmupMessages = warmupMessages;
        this.sentLimit = totalMessages;
        this.periodNanos = Math.max(1, Math.round(1e9 / rate));
        this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "bench-publisher");
            t.setDaemon(true);
            return t;
        });
    }

    /** The benchmark's producer on {@code topic}: never blocks, sequence ids set by the caller. */
    static Producer<byte[]> producer(PulsarClient client, String topic, BenchSettings s)
            throws PulsarClientException {
        return client.newProducer(Schema.BYTES)
                .topic(topic)
                .producerName("bench-producer")
                .enableBatching(s.batching)
                .batchingMaxPublishDelay(1, TimeUnit.MILLISECONDS)
                .blockIfQueueFull(false)
                .maxPendingMessages(1_000)
                .sendTimeout(30, TimeUnit.SECONDS)
                .create();
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
        return startNanos + (seq - firstSeq) * periodNanos;
    }

    private void sendNext() {
        int k = next.get();
        if (k >= sentLimit) {
            task.cancel(false);
            return;
        }
        int seq = firstSeq + k;
        long intended = intendedNanos(seq);
        long now = System.nanoTime();
        lag.recordValue(Math.max(0, TimeUnit.NANOSECONDS.toMillis(now - intended)));
        lastSendNanos = now;
        if (k == warmupMessages) {
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
    public int lastSentSeq() {
        return firstSeq + sent() - 1;
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
        if (ownsProducer) {
            producer.closeAsync();
        }
    }
}
