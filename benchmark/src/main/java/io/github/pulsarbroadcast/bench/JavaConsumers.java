package io.github.pulsarbroadcast.bench;

import io.github.pulsarbroadcast.bench.core.ConsumerTracker;
import io.github.pulsarbroadcast.bench.core.Deliveries;
import io.github.pulsarbroadcast.bench.core.Mode;
import io.github.pulsarbroadcast.bench.fleet.FleetState;
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
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.MessageListener;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.ReaderListener;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionType;

/**
 * The N consumers (or readers) of one run as stock Java client consumers in this JVM ({@code --client java}),
 * created the way the mode prescribes, and their connect phase: subscribe requests go out with at most
 * {@code connectConcurrency} in flight; each consumer's completion time is recorded in its {@link ConsumerTracker}.
 *
 * <p>Threading: the main thread issues the requests and polls; completions run on the clients' I/O threads and
 * write only atomics and the trackers; messages arrive on the clients' listener threads ({@link Receiver}).
 * {@link #pause} and {@link #resume} run on the main thread.
 */
final class JavaConsumers implements ConsumerSide {

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

    JavaConsumers(Mode mode, String topic, int subscriptions, BenchSettings settings, ClientPool clients,
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

    @Override
    public int connected() {
        return connected.get();
    }

    @Override
    public Outcome connect(BooleanSupplier healthy, Runnable tick) throws InterruptedException {
        int n = consumers.length();
        Semaphore inFlight = new Semaphore(settings.connectConcurrency);
        long start = System.nanoTime();
        long deadline = start + TimeUnit.SECONDS.toNanos(settings.connectTimeoutSeconds);
        Outcome out = new Outcome();
        for (int i = 0; i < n && !out.timedOut; i++) {
            if (settings.connectRate > 0) {
                pace(start + (long) (i * 1e9 / settings.connectRate), tick);
            }
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

    /** Waits until {@code dueNanos} ({@code --connect-rate}), ticking meanwhile. */
    private static void pace(long dueNanos, Runnable tick) throws InterruptedException {
        for (long wait = dueNanos - System.nanoTime(); wait > 0; wait = dueNanos - System.nanoTime()) {
            TimeUnit.NANOSECONDS.sleep(Math.min(wait, TimeUnit.MILLISECONDS.toNanos(200)));
            tick.run();
        }
    }

    private void subscribe(int index, long phaseStart, Semaphore inFlight) {
        ConsumerTracker tracker = deliveries.trackers()[index];
        Receiver receiver = new Receiver(deliveries, tracker);
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

    private ConsumerBuilder<byte[]> consumerBuilder(PulsarClient client, int index, Receiver receiver) {
        ConsumerBuilder<byte[]> b = client.newConsumer(Schema.BYTES)
                .topic(topic)
                .consumerName("consumer-" + index)
                .subscriptionName(mode.subscription(index, subscriptions))
                .receiverQueueSize(settings.receiverQueue)
                .acknowledgmentGroupTime(settings.ackGroupMillis, TimeUnit.MILLISECONDS)
                .messageListener(receiver);
        if (mode.broadcast()) {
            return Broadcast.configure(b);
        }
        return b.subscriptionType(SubscriptionType.Exclusive);
    }

    @Override
    public long firstReceipts() {
        return deliveries.firstReceipts();
    }

    @Override
    public long lastReceiptNanos() {
        return deliveries.lastReceiptNanos();
    }

    @Override
    public int catchingUp() {
        return deliveries.catchingUp();
    }

    @Override
    public long liveP99() {
        return deliveries.latency().liveP99();
    }

    @Override
    public void window(int window) {
        deliveries.latency().window(window);
    }

    @Override
    public FleetState collect() {
        return null; // the listeners write into this JVM's Deliveries directly
    }

    /**
     * Closes every consumer and reader that connected (the broker drops their subscriptions or cursors' consumers)
     * and waits up to {@code seconds} for the broker to confirm, then starts closing the clients.
     */
    @Override
    public void close(long seconds) {
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

    @Override
    public void abandon() {
        // the run abandons the clients themselves (ClientPool)
    }

    @Override
    public List<Long> pids() {
        return List.of();
    }

    @Override
    public String trouble() {
        return null;
    }

    @Override
    public void pause(List<Integer> indexes) {
        forEach(indexes, true);
    }

    @Override
    public void resume(List<Integer> indexes, int targetSeq) {
        deliveries.startCatchUp(targetSeq);
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

    /**
     * The listener of one consumer or reader: records the message, then acknowledges it (consumers only). The
     * message's sequence id is its sequence number and its event time the intended send time ({@link Publisher}).
     * Threading: called on the consumer's pinned listener thread; holds only final references.
     */
    static final class Receiver implements MessageListener<byte[]>, ReaderListener<byte[]> {
        private static final long serialVersionUID = 1L;

        private final transient Deliveries deliveries;
        private final transient ConsumerTracker tracker;

        Receiver(Deliveries deliveries, ConsumerTracker tracker) {
            this.deliveries = deliveries;
            this.tracker = tracker;
        }

        @Override
        public void received(Consumer<byte[]> consumer, Message<byte[]> msg) {
            record(msg);
            consumer.acknowledgeAsync(msg.getMessageId());
        }

        @Override
        public void received(Reader<byte[]> reader, Message<byte[]> msg) {
            record(msg);
        }

        private void record(Message<byte[]> msg) {
            try {
                deliveries.onMessage(tracker, Math.toIntExact(msg.getSequenceId()), System.nanoTime(),
                        System.currentTimeMillis(), msg.getEventTime(), msg.getPublishTime(),
                        msg.getBrokerPublishTime().orElse(-1L));
            } catch (RuntimeException e) {
                deliveries.listenerFailed("consumer " + tracker.index() + ": " + Errors.brief(e));
            }
        }
    }
}
