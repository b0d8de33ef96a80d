package io.github.pulsarbroadcast.bench;

import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.BooleanSupplier;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.ConsumerBuilder;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionType;

/**
 * The N consumers (or readers) of one run, created the way the mode prescribes, and their connect phase: subscribe
 * requests go out with at most {@code connectConcurrency} in flight; each consumer's completion time is recorded in
 * its {@link ConsumerTracker}.
 *
 * <p>Threading: the main thread issues the requests and polls; completions run on the clients' I/O threads and
 * write only atomics and the trackers. {@link #pause} and {@link #resume} run on the main thread.
 */
final class Fleet {

    /** How the connect phase ended. Threading: filled and read by the main thread. */
    static final class Outcome {
        int connected;
        int failed;
        long elapsedMs;
        boolean timedOut;
        String firstError;
    }

    private final Mode mode;
    private final String topic;
    private final int subscriptions;
    private final BenchSettings settings;
    private final ClientPool clients;
    private final Deliveries deliveries;
    private final AtomicReferenceArray<Consumer<byte[]>> consumers;
    private final AtomicReferenceArray<Reader<byte[]>> readers;
    private final AtomicInteger connected = new AtomicInteger();
    private final AtomicInteger failed = new AtomicInteger();
    private final AtomicReference<String> firstError = new AtomicReference<>();

    Fleet(Mode mode, String topic, int subscriptions, BenchSettings settings, ClientPool clients,
            Deliveries deliveries) {
        this.mode = mode;
        this.topic = topic;
        this.subscriptions = subscriptions;
        this.settings = settings;
        this.clients = clients;
        this.deliveries = deliveries;
        this.consumers = new AtomicReferenceArray<>(deliveries.trackers().length);
        this.readers = new AtomicReferenceArray<>(mode == Mode.READERS ? deliveries.trackers().length : 0);
    }

    /** The subscription name of consumer {@code index} in {@code mode} (null for readers). */
    static String subscriptionOf(Mode mode, int index, int subscriptions) {
        switch (mode) {
            case BROADCAST:
                return "broadcast";
            case SPLIT:
                return "broadcast-" + (index % subscriptions);
            case READERS:
                return null;
            default:
                return "sub-" + index;
        }
    }

    int connected() {
        return connected.get();
    }

    /**
     * Connects every consumer, or stops at the deadline or as soon as {@code healthy} says false (the broker died,
     * this JVM's heap is full). {@code tick} runs on this thread about every 200 ms (progress bar).
     */
    Outcome connect(BooleanSupplier healthy, Runnable tick) throws InterruptedException {
        int n = consumers.length();
        Semaphore inFlight = new Semaphore(settings.connectConcurrency);
        long start = System.nanoTime();
        long deadline = start + TimeUnit.SECONDS.toNanos(settings.connectTimeoutSeconds);
        Outcome out = new Outcome();
        for (int i = 0; i < n && !out.timedOut; i++) {
            while (!inFlight.tryAcquire(200, TimeUnit.MILLISECONDS)) {
                tick.run();
                if (!healthy.getAsBoolean() || System.nanoTime() > deadline) {
                    out.timedOut = true;
                    break;
                }
            }
            if (!out.timedOut) {
                subscribe(i, start, inFlight);
            }
            if (i % 1_000 == 999) {
                tick.run();
                out.timedOut = !healthy.getAsBoolean() || System.nanoTime() > deadline;
            }
        }
        while (connected.get() + failed.get() < n && !out.timedOut) {
            tick.run();
            out.timedOut = !healthy.getAsBoolean() || System.nanoTime() > deadline;
            Thread.sleep(out.timedOut ? 0 : 200);
        }
        tick.run();
        out.connected = connected.get();
        out.failed = failed.get();
        out.elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        out.firstError = firstError.get();
        return out;
    }

    private void subscribe(int index, long phaseStart, Semaphore inFlight) {
        ConsumerTracker tracker = deliveries.trackers()[index];
        Deliveries.Receiver receiver = new Deliveries.Receiver(deliveries, tracker);
        PulsarClient client = clients.forConsumer(index);
        long requested = System.nanoTime();
        CompletableFuture<?> f;
        if (mode == Mode.READERS) {
            f = client.newReader(Schema.BYTES).topic(topic).startMessageId(MessageId.latest)
                    .readerName("reader-" + index).receiverQueueSize(settings.receiverQueue)
                    .readerListener(receiver).createAsync().thenAccept(r -> readers.set(index, r));
        } else {
            f = consumerBuilder(client, index, receiver).subscribeAsync().thenAccept(c -> consumers.set(index, c));
        }
        f.whenComplete((ignored, e) -> {
            inFlight.release();
            long now = System.nanoTime();
            if (e == null) {
                tracker.connected(TimeUnit.NANOSECONDS.toMillis(now - phaseStart),
                        TimeUnit.NANOSECONDS.toMillis(now - requested));
                connected.incrementAndGet();
            } else {
                failed.incrementAndGet();
                firstError.compareAndSet(null, "consumer " + index + ": " + Errors.brief(e));
            }
        });
    }

    private ConsumerBuilder<byte[]> consumerBuilder(PulsarClient client, int index, Deliveries.Receiver receiver) {
        ConsumerBuilder<byte[]> b = client.newConsumer(Schema.BYTES)
                .topic(topic)
                .consumerName("consumer-" + index)
                .subscriptionName(subscriptionOf(mode, index, subscriptions))
                .receiverQueueSize(settings.receiverQueue)
                .acknowledgmentGroupTime(settings.ackGroupMillis, TimeUnit.MILLISECONDS)
                .messageListener(receiver);
        if (mode == Mode.BROADCAST || mode == Mode.SPLIT) {
            return Broadcast.configure(b);
        }
        return b.subscriptionType(SubscriptionType.Exclusive);
    }

    /**
     * Closes every consumer and reader that connected (the broker drops their subscriptions or cursors' consumers)
     * and waits up to {@code seconds} for the broker to confirm.
     */
    void close(long seconds) {
        List<CompletableFuture<Void>> closing = new ArrayList<>();
        for (int i = 0; i < consumers.length(); i++) {
            Consumer<byte[]> c = consumers.get(i);
            if (c != null) {
                closing.add(c.closeAsync());
            }
        }
        for (int i = 0; i < readers.length(); i++) {
            Reader<byte[]> r = readers.get(i);
            if (r != null) {
                closing.add(r.closeAsync());
            }
        }
        try {
            CompletableFuture.allOf(closing.toArray(new CompletableFuture<?>[0])).get(seconds, TimeUnit.SECONDS);
        } catch (Exception e) {
            // the clients' close covers the rest
        }
    }

    /** Pauses the given consumers: they stop asking the broker for more messages. */
    void pause(List<Integer> indexes) {
        forEach(indexes, true);
    }

    void resume(List<Integer> indexes) {
        forEach(indexes, false);
    }

    private void forEach(List<Integer> indexes, boolean pause) {
        for (int i : indexes) {
            Consumer<byte[]> c = consumers.get(i);
            if (c != null) {
                if (pause) {
                    c.pause();
                } else {
                    c.resume();
                }
            }
        }
    }
}
