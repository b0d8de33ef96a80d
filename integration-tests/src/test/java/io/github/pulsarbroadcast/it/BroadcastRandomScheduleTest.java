package io.github.pulsarbroadcast.it;

import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.awaitility.Awaitility;
import org.testng.annotations.Test;

/**
 * The broker-level version of the dispatch model test: random schedules against a real broker and BookKeeper, ledgers
 * rolling over every 5 entries. Each schedule publishes numbered messages and mixes receiving with individual and
 * cumulative acks, negative acks (redelivery), consumers closing and coming back under the same name, and topic
 * unloads (the recovery path). At the end every consumer that is connected drains, and for each consumer name the
 * test checks that it received every message from the first one it saw to the last one published (at least once:
 * duplicates are allowed after a reconnect or an unload), and that its current connection started no later than the
 * first message published after it opened. A failure prints its seed; {@code -Dbroadcast.brokerModel.seed=<seed>}
 * replays the same choices (timing against a real broker differs), {@code -Dbroadcast.brokerModel.schedules=N} runs
 * more, {@code -Dbroadcast.brokerModel.parallel=P} plays P schedules at once (each on a topic of its own; 4 by
 * default: the schedules spend most of their time waiting on the broker, and playing them side by side also mixes
 * their unloads, reads and ledger rollovers on the broker's threads).
 *
 * <p>A consumer that the stock Java client's epoch race stalled (apache/pulsar#20032, see {@link ClientEpochRace}) gets
 * one more redelivery request at the end, once connected, and is drained again: the race makes a client drop every
 * message until its next redelivery request, which loses nothing; anything still missing after that is a loss. The
 * race is counted and printed.
 *
 * <p>Groups {@code integration} (300 schedules, about a minute and a half on 2 cores) and {@code model-broker}, which
 * runs it alone: {@code ./mvnw -B -ntp verify -pl integration-tests -am -Dgroups=model-broker
 * -Dsurefire.failIfNoSpecifiedTests=false -Dbroadcast.brokerModel.schedules=1000}; {@code -Dbroadcast.log.level=DEBUG}
 * adds the plugin's debug log (joins with their epochs, redeliveries).
 *
 * <p>Threading: the test thread starts the schedules on a fixed pool and waits for them; a schedule's state lives in
 * its own {@link Schedule}, used by one pool thread; the counters are atomic.
 */
public class BroadcastRandomScheduleTest extends BroadcastTestBase {

    private static final long SEED = Long.getLong("broadcast.brokerModel.seed", -1L);
    private static final int SCHEDULES = Integer.getInteger("broadcast.brokerModel.schedules", 300);
    private static final int PARALLEL = Integer.getInteger("broadcast.brokerModel.parallel", 4);
    private static final String[] NAMES = {"car-a", "car-b", "car-c"};

    @Override
    protected void configureBroker(ServiceConfiguration conf) {
        conf.setManagedLedgerMaxEntriesPerLedger(5);
        conf.setManagedLedgerMinLedgerRolloverTimeMinutes(0);
        conf.getProperties().setProperty("broadcastMarkDeleteIntervalMs", "100");
        conf.getProperties().setProperty("broadcastWindowMaxEntries", "4");
        conf.getProperties().setProperty("broadcastMaxReadBatchSize", "3");
    }

    /** Consumers that the client's epoch race had stalled and one more redelivery request set going again. */
    private final AtomicInteger healed = new AtomicInteger();
    /** Messages published, receptions and topic unloads over every schedule (printed, to show what was played). */
    private final AtomicLong published = new AtomicLong();
    private final AtomicLong receptions = new AtomicLong();
    private final AtomicLong unloads = new AtomicLong();

    @Test(groups = {"integration", "model-broker"}, timeOut = 1_800_000)
    public void randomSchedulesLoseNothing() throws Exception {
        long base = SEED >= 0 ? SEED : System.nanoTime() & 0xffff_ffffL;
        int count = SEED >= 0 ? 1 : SCHEDULES;
        System.out.println("BroadcastRandomScheduleTest: " + count + " schedules, " + PARALLEL + " at once, seeds from "
                + base);
        long started = System.nanoTime();
        ExecutorService pool = Executors.newFixedThreadPool(PARALLEL);
        try (ClientEpochRace race = ClientEpochRace.watch()) {
            List<Future<?>> runs = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                long seed = base + i;
                runs.add(pool.submit(() -> new Schedule(seed, race).play()));
            }
            for (Future<?> run : runs) {
                run.get();
            }
        } finally {
            pool.shutdownNow();
        }
        System.out.println("BroadcastRandomScheduleTest: " + count + " schedules passed in "
                + TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started) + " s (" + published + " messages, "
                + receptions + " receptions, " + unloads + " unloads); " + healed + " consumers were stalled by the"
                + " client's epoch race and resumed on one more redelivery request");
    }

    /** One schedule: its topic, its consumers and what each received. Used by one thread. */
    private final class Schedule {
        private final long seed;
        private final Random rnd;
        private final ClientEpochRace race;
        private final String topic = newTopic("random");
        private final Map<String, Consumer<String>> connected = new HashMap<>();
        /** Every message a name received, over all its connections. */
        private final Map<String, TreeSet<Integer>> received = new HashMap<>();
        /** What a name's current connection received. */
        private final Map<String, TreeSet<Integer>> session = new HashMap<>();
        /** How many messages were published when a name's current connection opened. */
        private final Map<String, Integer> openedAt = new HashMap<>();
        private final Map<String, List<String>> arrivals = new HashMap<>();
        private final List<MessageId> ids = new ArrayList<>();
        private final List<String> trace = new ArrayList<>();

        Schedule(long seed, ClientEpochRace race) {
            this.seed = seed;
            this.rnd = new Random(seed);
            this.race = race;
        }

        Void play() throws Exception {
            try (Producer<String> producer = producer(topic)) {
                open(NAMES[0]);
                for (int step = 0; step < 40; step++) {
                    step(producer, rnd.nextInt(100));
                }
                for (String name : connected.keySet()) {
                    finalDrain(name);
                }
                check();
                published.addAndGet(ids.size());
                return null;
            } finally {
                for (Consumer<String> c : connected.values()) {
                    c.close();
                }
            }
        }

        private void step(Producer<String> producer, int r) throws Exception {
            if (r < 35) {
                int n = 1 + rnd.nextInt(4);
                for (int k = 0; k < n; k++) {
                    ids.add(producer.send(Integer.toString(ids.size())));
                }
                trace.add("publish " + n);
            } else if (r < 70 && !connected.isEmpty()) {
                String name = pick();
                trace.add(name + " takes " + consume(name, 1 + rnd.nextInt(5), 100));
            } else if (r < 80 && !connected.isEmpty()) {
                String name = pick();
                connected.remove(name).close();
                arrivals.get(name).add("close");
                trace.add("close " + name);
            } else if (r < 92) {
                String name = NAMES[rnd.nextInt(NAMES.length)];
                if (!connected.containsKey(name)) {
                    open(name);
                    trace.add("open " + name);
                }
            } else if (r < 96 && !connected.isEmpty()) {
                String name = pick();
                connected.get(name).redeliverUnacknowledgedMessages();
                arrivals.get(name).add("redeliver");
                trace.add("redeliver " + name);
            } else {
                cluster.admin().topics().unload(topic);
                unloads.incrementAndGet();
                trace.add("unload");
            }
        }

        private void open(String name) throws Exception {
            connected.put(name, Broadcast.configure(client.newConsumer(Schema.STRING)).topic(topic)
                    .subscriptionName("fleet").consumerName(name).receiverQueueSize(3)
                    .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                    .negativeAckRedeliveryDelay(100, TimeUnit.MILLISECONDS).subscribe());
            received.computeIfAbsent(name, k -> new TreeSet<>());
            arrivals.computeIfAbsent(name, k -> new ArrayList<>()).add("open@" + ids.size());
            openedAt.put(name, ids.size());
            session.put(name, new TreeSet<>());
        }

        /**
         * The end of a schedule for one connected consumer: receives until nothing is missing (up to 10 s without a
         * message), and one redelivery request more if the client logged its epoch race for it (see
         * {@link ClientEpochRace}): a stall the next request heals; a loss would stay missing.
         */
        private void finalDrain(String name) throws Exception {
            drain(name);
            if (missing(name) && race.suspected(topic, name)) {
                healed.incrementAndGet();
                arrivals.get(name).add("stalled by the client's epoch race: redeliver");
                connected.get(name).redeliverUnacknowledgedMessages();
                drain(name);
            }
        }

        /** Once the consumer is connected, receives (acking everything) until nothing is missing or 10 s are quiet. */
        private void drain(String name) throws Exception {
            Consumer<String> consumer = connected.get(name);
            Awaitility.await("consumer connected").atMost(java.time.Duration.ofSeconds(60))
                    .until(consumer::isConnected);
            while (missing(name) && consume(name, 1, 10_000) > 0) {
                // one message at a time until the set is complete
            }
        }

        /**
         * Whether a message between the first one received (or the opening) and the last one published is missing,
         * or the current connection has not yet received the first message published after it opened.
         */
        private boolean missing(String name) {
            TreeSet<Integer> got = received.get(name);
            int opened = openedAt.get(name);
            boolean gap = got.isEmpty() ? ids.size() > opened : got.size() < ids.size() - got.first();
            TreeSet<Integer> now = session.get(name);
            return gap || ids.size() > opened && (now.isEmpty() || now.first() > opened);
        }

        private String pick() {
            List<String> names = new ArrayList<>(connected.keySet());
            names.sort(null);
            return names.get(rnd.nextInt(names.size()));
        }

        /**
         * Receives up to {@code max} messages (each waited for at most {@code waitMs}), acking them in random ways; a
         * drain ({@code max == 1} with a long wait) acks individually.
         */
        private int consume(String name, int max, int waitMs) throws Exception {
            Consumer<String> consumer = connected.get(name);
            int got = 0;
            while (got < max) {
                Message<String> m = consumer.receive(waitMs, TimeUnit.MILLISECONDS);
                if (m == null) {
                    break;
                }
                got++;
                receptions.incrementAndGet();
                int value = Integer.parseInt(m.getValue());
                received.get(name).add(value);
                session.get(name).add(value);
                ack(consumer, m, waitMs >= 10_000 ? 0 : rnd.nextInt(10), arrivals.get(name));
            }
            return got;
        }

        private void check() {
            for (String name : connected.keySet()) {
                TreeSet<Integer> got = received.get(name);
                int opened = openedAt.get(name);
                TreeSet<Integer> now = session.get(name);
                if (ids.size() > opened && (now.isEmpty() || now.first() > opened)) {
                    throw failure(name + " opened when " + opened + " messages were published but its connection"
                            + " started at " + (now.isEmpty() ? "nothing" : now.first()) + "\n  " + name + ": "
                            + arrivals.get(name));
                }
                for (int i = got.isEmpty() ? ids.size() : got.first(); i < ids.size(); i++) {
                    if (!got.contains(i)) {
                        throw failure(name + " never received message " + i + " (" + ids.get(i) + "; first "
                                + got.first() + ", published " + ids.size() + ")\n  " + name + ": "
                                + arrivals.get(name));
                    }
                }
            }
        }

        private AssertionError failure(String what) {
            return new AssertionError("seed " + seed + ": " + what + "\n  steps: " + String.join(" | ", trace));
        }
    }

    /** Acks {@code m} individually (mode 0-5), cumulatively (6-8) or negatively (9). */
    private static void ack(Consumer<String> consumer, Message<String> m, int mode, List<String> arrivals)
            throws Exception {
        if (mode < 6) {
            consumer.acknowledge(m);
            arrivals.add(m.getValue() + "@" + m.getMessageId() + ":ack");
        } else if (mode < 9) {
            consumer.acknowledgeCumulative(m);
            arrivals.add(m.getValue() + "@" + m.getMessageId() + ":cumulative");
        } else {
            consumer.negativeAcknowledge(m);
            arrivals.add(m.getValue() + "@" + m.getMessageId() + ":nack");
        }
    }
}
