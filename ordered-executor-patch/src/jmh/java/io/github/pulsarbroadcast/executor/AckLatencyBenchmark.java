package io.github.pulsarbroadcast.executor;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.apache.bookkeeper.common.util.OrderedExecutor;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.runner.IterationType;

/**
 * NTT's "100K consumers on one topic" OrderedExecutor experiment, in miniature.
 *
 * <p>One benchmark operation is one broadcast round: a dispatcher (the JMH thread) submits one SEND task per
 * consumer ({@code sendWorkMicros} of busy CPU each); when a SEND finishes, the consumer "acks" at once, so the SEND
 * task submits that consumer's ACK task ({@code ackWorkMicros} of CPU). The round ends when every ACK has run.
 * <b>ACK latency</b> is the time from the ACK's submission to the end of the ACK task; it is recorded for every ACK
 * of every measurement round in an HdrHistogram, printed at the end of each trial and appended to a CSV file
 * ({@code -DackLatencyCsv=PATH}, default {@code jmh-ack-latency.csv} in the working directory). The JMH score is
 * rounds per second; the {@code acks} auxiliary counter is ACKs per second.
 *
 * <p>Policies:
 * <ul>
 *   <li>{@code TOPIC_KEYED_STOCK}: what Pulsar 2.10 does: a plain BookKeeper {@link OrderedExecutor}, SEND and
 *       ACK both keyed by the topic name, so everything runs on one thread, in one queue.</li>
 *   <li>{@code SUBSCRIPTION_KEYED_ORDERED_ACK}: {@link SubscriptionOrderedExecutor}, consumers split over
 *       {@code subscriptions} subscriptions, SEND and ACK both keyed by the subscription (only the first fix).</li>
 *   <li>{@code SUBSCRIPTION_KEYED_RANDOM_ACK}: SEND keyed by the subscription, ACK on a random thread (both
 *       fixes: the policy of this module).</li>
 * </ul>
 *
 * <p>Threading: the state is {@link Scope#Benchmark} but only one JMH thread runs the benchmark. The per-consumer
 * arrays are written by the executor threads and read by the JMH thread after {@link CountDownLatch#await()},
 * which orders the writes before the reads; {@link #histogram} is touched only by the JMH thread.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 3)
@Fork(1)
public class AckLatencyBenchmark {

    /** How SEND and ACK tasks are placed. */
    public enum Policy { TOPIC_KEYED_STOCK, SUBSCRIPTION_KEYED_ORDERED_ACK, SUBSCRIPTION_KEYED_RANDOM_ACK }

    private static final String TOPIC = "persistent://public/default/broadcast";

    @Param({"1000", "10000"})
    public int consumers;

    @Param({"TOPIC_KEYED_STOCK", "SUBSCRIPTION_KEYED_ORDERED_ACK", "SUBSCRIPTION_KEYED_RANDOM_ACK"})
    public Policy policy;

    @Param({"4"})
    public int subscriptions;

    @Param({"2"})
    public int threads;

    @Param({"3"})
    public int sendWorkMicros;

    @Param({"1"})
    public int ackWorkMicros;

    private OrderedExecutor stock;
    private SubscriptionOrderedExecutor patched;
    private SubscriptionKey[] keyOfConsumer;
    private Runnable[] sends;
    private Runnable[] acks;
    /** Written by the SEND task of consumer {@code i}, read by its ACK task (ordered by the executor's queue). */
    private long[] ackSubmittedNanos;
    /** Written by the ACK task of consumer {@code i}, read by the JMH thread after the round's latch. */
    private long[] ackLatencyNanos;
    /** Set by the JMH thread before a round's SENDs are submitted; read by the ACK tasks of that round. */
    private volatile CountDownLatch round;
    private Histogram histogram;
    private boolean measuring;
    private long measuredRounds;

    /** ACKs per second, reported by JMH next to the score. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class AckCounter {
        public long acks;

        @Setup(Level.Iteration)
        public void reset() {
            acks = 0;
        }
    }

    @Setup(Level.Trial)
    public void setUp() {
        histogram = new Histogram(TimeUnit.MINUTES.toNanos(1), 3);
        measuredRounds = 0;
        if (policy == Policy.TOPIC_KEYED_STOCK) {
            stock = OrderedExecutor.newBuilder().name("stock").numThreads(threads).build();
        } else {
            patched = SubscriptionOrderedExecutor.builder().name("patched").numThreads(threads).build();
        }
        keyOfConsumer = new SubscriptionKey[consumers];
        sends = new Runnable[consumers];
        acks = new Runnable[consumers];
        ackSubmittedNanos = new long[consumers];
        ackLatencyNanos = new long[consumers];
        for (int i = 0; i < consumers; i++) {
            keyOfConsumer[i] = SubscriptionKey.of(TOPIC, "sub-" + (i % subscriptions));
            sends[i] = newSend(i);
            acks[i] = newAck(i);
        }
        System.out.println();
        System.out.println("placement: " + placement());
    }

    @Setup(Level.Iteration)
    public void startIteration(IterationParams params) {
        measuring = params.getType() == IterationType.MEASUREMENT;
    }

    @Benchmark
    public void broadcastRound(AckCounter counter) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(consumers);
        round = done;
        for (int i = 0; i < consumers; i++) {
            if (policy == Policy.TOPIC_KEYED_STOCK) {
                stock.chooseThread(TOPIC).execute(sends[i]);
            } else {
                patched.executeOrdered(keyOfConsumer[i], sends[i]);
            }
        }
        done.await();
        counter.acks += consumers;
        if (measuring) {
            measuredRounds++;
            for (long latency : ackLatencyNanos) {
                histogram.recordValue(latency);
            }
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (stock != null) {
            stock.shutdown();
            stock = null;
        }
        if (patched != null) {
            patched.shutdown(Duration.ofSeconds(10));
            patched = null;
        }
        report();
    }

    private Runnable newSend(int consumer) {
        return () -> {
            spin(sendWorkMicros);
            ackSubmittedNanos[consumer] = System.nanoTime();
            switch (policy) {
                case TOPIC_KEYED_STOCK:
                    stock.chooseThread(TOPIC).execute(acks[consumer]);
                    break;
                case SUBSCRIPTION_KEYED_ORDERED_ACK:
                    patched.executeOrdered(keyOfConsumer[consumer], acks[consumer]);
                    break;
                default:
                    patched.executeUnordered(acks[consumer]);
                    break;
            }
        };
    }

    private Runnable newAck(int consumer) {
        return () -> {
            spin(ackWorkMicros);
            ackLatencyNanos[consumer] = System.nanoTime() - ackSubmittedNanos[consumer];
            round.countDown();
        };
    }

    /** Busy CPU work of a fixed duration: stands for serializing and writing a message, or updating a cursor. */
    private static void spin(int micros) {
        long end = System.nanoTime() + TimeUnit.MICROSECONDS.toNanos(micros);
        while (System.nanoTime() < end) {
            Thread.onSpinWait();
        }
    }

    private String placement() {
        if (patched == null) {
            return "all SEND and ACK tasks on the topic's thread of " + threads;
        }
        StringBuilder text = new StringBuilder("SEND threads by subscription:");
        for (int s = 0; s < subscriptions; s++) {
            text.append(' ').append("sub-").append(s).append("->")
                    .append(patched.threadIndex(SubscriptionKey.of(TOPIC, "sub-" + s)));
        }
        return text.append(" (of ").append(threads).append(" threads)").toString();
    }

    private void report() {
        String row = String.format(Locale.ROOT, "%s,%d,%d,%d,%d,%d,%d,%d,%.1f,%.1f,%.1f,%.1f,%.1f",
                policy, consumers, subscriptions, threads, sendWorkMicros, ackWorkMicros, measuredRounds,
                histogram.getTotalCount(), micros(histogram.getValueAtPercentile(50)),
                micros(histogram.getValueAtPercentile(99)), micros(histogram.getValueAtPercentile(99.9)),
                micros(histogram.getMaxValue()), histogram.getMean() / 1_000.0);
        System.out.println();
        System.out.printf(Locale.ROOT, "ACK latency %s consumers=%d: p50=%.1f us p99=%.1f us p99.9=%.1f us "
                        + "max=%.1f us (%d ACKs in %d measured rounds)%n", policy, consumers,
                micros(histogram.getValueAtPercentile(50)), micros(histogram.getValueAtPercentile(99)),
                micros(histogram.getValueAtPercentile(99.9)), micros(histogram.getMaxValue()),
                histogram.getTotalCount(), measuredRounds);
        appendCsv(row);
    }

    private static double micros(long nanos) {
        return nanos / 1_000.0;
    }

    private static void appendCsv(String row) {
        Path path = Paths.get(System.getProperty("ackLatencyCsv", "jmh-ack-latency.csv"));
        try {
            if (!Files.exists(path)) {
                Files.write(path, ("policy,consumers,subscriptions,threads,sendWorkMicros,ackWorkMicros,rounds,acks,"
                        + "p50_us,p99_us,p99_9_us,max_us,mean_us\n").getBytes(StandardCharsets.UTF_8));
            }
            Files.write(path, (row + "\n").getBytes(StandardCharsets.UTF_8), StandardOpenOption.APPEND);
            System.out.println("appended to " + path.toAbsolutePath());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
