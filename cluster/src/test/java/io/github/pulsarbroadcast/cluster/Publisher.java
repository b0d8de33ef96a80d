package io.github.pulsarbroadcast.cluster;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.BitSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.awaitility.Awaitility;

/**
 * Publishes sequence numbers 0, 1, 2, ... at a fixed rate (16-byte messages, the number in the first 4 bytes,
 * batching off, no send time-out: a message waits in the client until a broker has stored it). It records when each
 * message was issued and when its send completed.
 *
 * <p>Threading: one scheduler thread issues; the client's threads complete the sends; the test thread reads. State
 * is guarded by the publisher's monitor.
 */
final class Publisher implements AutoCloseable {

    private final Producer<byte[]> producer;
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "chaos-publisher");
        t.setDaemon(true);
        return t;
    });
    private final BitSet stored = new BitSet();
    private int[] issuedAt = new int[4096];
    private int[] storedAt = new int[4096];
    private int issued;
    private int storedBelow;
    private int failures;
    private String firstFailure;
    private boolean paused;

    private Publisher(Producer<byte[]> producer) {
        this.producer = producer;
    }

    static Publisher start(PulsarClient client, String topic, int perSecond) throws Exception {
        Producer<byte[]> producer = client.newProducer().topic(topic).enableBatching(false)
                .sendTimeout(0, TimeUnit.SECONDS).blockIfQueueFull(true).maxPendingMessages(100_000).create();
        Publisher p = new Publisher(producer);
        p.scheduler.scheduleAtFixedRate(p::issue, 0, 1_000_000L / perSecond, TimeUnit.MICROSECONDS);
        return p;
    }

    private void issue() {
        int seq;
        synchronized (this) {
            if (paused) {
                return;
            }
            seq = issued++;
            if (seq == issuedAt.length) {
                issuedAt = Arrays.copyOf(issuedAt, seq * 2);
                storedAt = Arrays.copyOf(storedAt, seq * 2);
            }
            issuedAt[seq] = Millis.now();
        }
        byte[] payload = ByteBuffer.allocate(16).putInt(seq).array();
        producer.sendAsync(payload).whenComplete((id, e) -> stored(seq, e));
    }

    private synchronized void stored(int seq, Throwable e) {
        if (e != null) {
            failures++;
            if (firstFailure == null) {
                firstFailure = seq + ": " + e;
            }
            return;
        }
        storedAt[seq] = Millis.now();
        stored.set(seq);
        while (stored.get(storedBelow)) {
            storedBelow++;
        }
    }

    /** The next sequence number to be issued. */
    synchronized int issued() {
        return issued;
    }

    /** Every message below this number is stored. */
    synchronized int storedBelow() {
        return storedBelow;
    }

    synchronized int failures() {
        return failures;
    }

    synchronized String firstFailure() {
        return firstFailure;
    }

    /** Stops issuing (the rate's ticks are skipped) or starts again. */
    synchronized void pause(boolean pause) {
        paused = pause;
    }

    /** The longest time a message numbered in [from, to) waited to be stored, in ms; -1 if one is not stored. */
    synchronized int longestWaitMs(int from, int to) {
        int longest = 0;
        for (int s = from; s < to; s++) {
            if (!stored.get(s)) {
                return -1;
            }
            longest = Math.max(longest, storedAt[s] - issuedAt[s]);
        }
        return longest;
    }

    /** Waits until every message issued so far is stored. */
    void awaitStored(Duration timeout) {
        int target = issued();
        Awaitility.await("every published message stored").atMost(timeout).pollInterval(Duration.ofMillis(200))
                .until(() -> storedBelow() >= target);
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
        producer.closeAsync();
    }
}
