package io.github.pulsarbroadcast.it;

import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastConsumer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.ConsumerBuilder;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionType;
import org.awaitility.Awaitility;
import org.testng.annotations.Test;

/**
 * A differential test with stock Pulsar as the reference: one consumer on a broadcast subscription must receive
 * exactly what one consumer on a stock Failover subscription receives, under random schedules of what operators and
 * devices do, played on two topics of the same broker side by side: publishing, the consumer leaving and coming back
 * under its name, topic unloads, and the admin calls reset-cursor (to the earliest and the latest position, to a
 * message, by time), skip and clear-backlog. Ledgers roll over every 5 entries, and are retained. After each step
 * the stock consumer is drained until it stays quiet, the broadcast one must then receive the same messages in the
 * same order, and nothing more. Both consumers acknowledge each message at once (no grouping, so the client's
 * duplicate filter holds nothing).
 *
 * <p>One documented difference is left out of the schedules (operations.md, "Handle it"): a reset-cursor after the
 * topic was loaded again and before any broadcast consumer came back reaches only the stock cursor, not the saved
 * positions; a reset is chosen only while the subscription is served as broadcast.
 *
 * <p>A failure prints its seed and the steps played; {@code -Dbroadcast.equivalence.seed=<seed>} plays the same
 * choices again (timing against a real broker differs), {@code -Dbroadcast.equivalence.schedules=N} plays more.
 * Groups {@code integration} (2 schedules, about 45 s) and {@code model-broker} (with {@code -D...schedules=24}: 24
 * schedules in 9 minutes in the twenty-seventh session, all equal; with the read-position fix of
 * {@code ManagedCursorStorage.readTail} taken out, a failing schedule was found within 6).
 *
 * <p>Threading: the test thread only.
 */
public class StockEquivalenceTest extends BroadcastTestBase {

    private static final long SEED = Long.getLong("broadcast.equivalence.seed", -1L);
    private static final int SCHEDULES = Integer.getInteger("broadcast.equivalence.schedules", 2);
    private static final int STEPS = 14;
    /** How long the stock consumer must stay quiet before its drain ends (the first message may take a reconnect). */
    private static final long QUIET_MS = 700;
    private static final long FIRST_MS = 3_000;

    @Override
    protected void configureBroker(ServiceConfiguration conf) {
        conf.setManagedLedgerMaxEntriesPerLedger(5);
        conf.setManagedLedgerMinLedgerRolloverTimeMinutes(0);
        // Retention, as an operator who wants replays sets it: without it a fully consumed ledger is deleted when
        // the managed ledger next trims, at its own time on each topic, and "earliest" then differs between them.
        conf.setDefaultRetentionTimeInMinutes(60);
        conf.setDefaultRetentionSizeInMB(100);
        conf.getProperties().setProperty("broadcastMarkDeleteIntervalMs", "100");
        conf.getProperties().setProperty("broadcastPositionSyncIntervalMs", "200");
    }

    @Test(groups = {"integration", "model-broker"}, timeOut = 900_000)
    public void oneBroadcastConsumerReceivesWhatOneStockConsumerReceives() throws Exception {
        long base = SEED >= 0 ? SEED : System.nanoTime() & 0xffff_ffffL;
        int count = SEED >= 0 ? 1 : SCHEDULES;
        System.out.println("StockEquivalenceTest: " + count + " schedules, seeds from " + base);
        for (int i = 0; i < count; i++) {
            new Schedule(base + i).play();
        }
    }

    /** One side of the comparison: a topic, its producer and its one consumer. */
    private final class Side {
        final String topic;
        final boolean broadcast;
        final List<MessageId> ids = new ArrayList<>();
        final List<Long> publishTimes = new ArrayList<>();
        Producer<String> producer;
        Consumer<String> consumer;
        PositionImpl lastReceived;

        Side(String topic, boolean broadcast) throws Exception {
            this.topic = topic;
            this.broadcast = broadcast;
            producer = closeAfterTest(client.newProducer(Schema.STRING).topic(topic).enableBatching(false).create());
            open();
        }

        void open() throws Exception {
            ConsumerBuilder<String> builder = client.newConsumer(Schema.STRING).topic(topic).subscriptionName("fleet")
                    .consumerName("car").acknowledgmentGroupTime(0, TimeUnit.MILLISECONDS);
            consumer = (broadcast ? Broadcast.configure(builder) : builder.subscriptionType(SubscriptionType.Failover))
                    .subscribe();
        }

        void close() throws Exception {
            consumer.close();
            consumer = null;
        }

        Message<String> next(long timeoutMs) throws Exception {
            Message<String> m = consumer.receive((int) timeoutMs, TimeUnit.MILLISECONDS);
            if (m != null) {
                consumer.acknowledge(m);
                lastReceived = BroadcastReconnectTest.position(m);
            }
            return m;
        }

        String describe() {
            return (broadcast ? "broadcast" : "stock") + " received up to " + lastReceived + ", acknowledged up to "
                    + acknowledged();
        }

        /**
         * Where the broker has the consumer's acknowledgements: the managed cursor's mark-delete position for stock,
         * the consumer's own position for broadcast (the managed cursor's may be held lower, by a recovery window).
         */
        PositionImpl acknowledged() {
            if (!broadcast) {
                return (PositionImpl) brokerSubscription(topic, "fleet").getCursor().getMarkDeletedPosition();
            }
            org.apache.pulsar.broker.service.Consumer c = brokerSubscription(topic, "fleet").getConsumers().stream()
                    .findFirst().orElse(null);
            BroadcastConsumer bc = c == null ? null : dispatcher(topic, "fleet").member(c);
            return bc == null ? null : bc.cursor().acknowledged();
        }

        /** The broker has every acknowledgement of the messages received (before an unload). */
        boolean settled() {
            PositionImpl acknowledged = acknowledged();
            return lastReceived == null || acknowledged != null && acknowledged.compareTo(lastReceived) >= 0;
        }
    }

    /** One random schedule over a stock side and a broadcast side. */
    private final class Schedule {
        final long seed;
        final Random random;
        final List<String> played = new ArrayList<>();
        int published;
        boolean open = true;
        /** False from an unload while the consumer is away until it comes back: see the class comment. */
        boolean served = true;
        Side stock;
        Side broadcast;

        Schedule(long seed) {
            this.seed = seed;
            this.random = new Random(seed);
        }

        void play() throws Exception {
            String id = Long.toString(seed, 36);
            stock = new Side(newTopic("equivalence-stock-" + id), false);
            broadcast = new Side(newTopic("equivalence-broadcast-" + id), true);
            try {
                for (int step = 0; step < STEPS; step++) {
                    String what = step();
                    played.add(what);
                    if (open) {
                        compare(what);
                    }
                }
                if (!open) {
                    stock.open();
                    broadcast.open();
                    played.add("open");
                    compare("open");
                }
            } finally {
                for (Side side : new Side[] {stock, broadcast}) {
                    if (side != null && side.consumer != null) {
                        side.close();
                    }
                }
            }
        }

        private String step() throws Exception {
            int choice = random.nextInt(published == 0 ? 2 : 10);
            switch (choice) {
                case 0: case 1: case 2:
                    return publish(1 + random.nextInt(4));
                case 3:
                    return openOrClose();
                case 4:
                    return unload();
                case 5:
                    if (!open) {
                        int n = 1 + random.nextInt(3);
                        cluster.admin().topics().skipMessages(stock.topic, "fleet", n);
                        cluster.admin().topics().skipMessages(broadcast.topic, "fleet", n);
                        return "skip " + n;
                    }
                    return publish(1);
                case 6:
                    if (!open) {
                        cluster.admin().topics().skipAllMessages(stock.topic, "fleet");
                        cluster.admin().topics().skipAllMessages(broadcast.topic, "fleet");
                        return "clear-backlog";
                    }
                    return publish(2);
                default:
                    return served ? reset() : publish(1);
            }
        }

        private String publish(int n) throws Exception {
            for (int i = 0; i < n; i++) {
                String value = "m-" + published++;
                for (Side side : new Side[] {stock, broadcast}) {
                    // Stock resets by time to the message after the last one published at or before the time: one
                    // millisecond before this send names this message (the one before it was published earlier).
                    side.publishTimes.add(System.currentTimeMillis() - 1);
                    side.ids.add(side.producer.send(value));
                }
                // Publish times one millisecond apart at least, so a reset by time names one message on each side.
                long now = System.currentTimeMillis();
                Awaitility.await().pollInterval(Duration.ofMillis(1)).atMost(Duration.ofSeconds(5))
                        .until(() -> System.currentTimeMillis() > now);
            }
            return "publish " + n;
        }

        private String openOrClose() throws Exception {
            if (open) {
                stock.close();
                broadcast.close();
                open = false;
                return "close";
            }
            stock.open();
            broadcast.open();
            open = true;
            served = true;
            return "open";
        }

        private String unload() throws Exception {
            if (open) { // a close sends its acknowledgements before it
                try {
                    Awaitility.await().atMost(Duration.ofSeconds(10))
                            .until(() -> stock.settled() && broadcast.settled());
                } catch (org.awaitility.core.ConditionTimeoutException e) {
                    throw new AssertionError("seed " + seed + ": after " + played + " the acknowledgements did not"
                            + " settle before an unload: " + stock.describe() + "; " + broadcast.describe(), e);
                }
            }
            cluster.admin().topics().unload(stock.topic);
            cluster.admin().topics().unload(broadcast.topic);
            if (!open) {
                served = false;
            }
            return "unload";
        }

        private String reset() throws Exception {
            int kind = random.nextInt(4);
            int index = random.nextInt(published);
            for (Side side : new Side[] {stock, broadcast}) {
                switch (kind) {
                    case 0:
                        cluster.admin().topics().resetCursor(side.topic, "fleet", MessageId.earliest);
                        break;
                    case 1:
                        cluster.admin().topics().resetCursor(side.topic, "fleet", MessageId.latest);
                        break;
                    case 2:
                        cluster.admin().topics().resetCursor(side.topic, "fleet", side.ids.get(index));
                        break;
                    default:
                        cluster.admin().topics().resetCursor(side.topic, "fleet", side.publishTimes.get(index));
                        break;
                }
            }
            return new String[] {"reset earliest", "reset latest", "reset to m-" + index,
                "reset by time to m-" + index}[kind];
        }

        /** Drains the stock consumer until quiet; the broadcast one must receive the same, then nothing more. */
        private void compare(String what) throws Exception {
            List<String> expected = new ArrayList<>();
            Message<String> m;
            for (long wait = FIRST_MS; (m = stock.next(wait)) != null; wait = QUIET_MS) {
                expected.add(m.getValue());
            }
            List<String> got = new ArrayList<>();
            for (int i = 0; i < expected.size() && (m = broadcast.next(10_000)) != null; i++) {
                got.add(m.getValue());
            }
            if (got.equals(expected) && (m = broadcast.next(QUIET_MS)) != null) {
                got.add(m.getValue());
            }
            if (!got.equals(expected)) {
                throw new AssertionError("seed " + seed + " (-Dbroadcast.equivalence.seed=" + seed + "): after "
                        + played + " the stock consumer received " + expected + ", the broadcast one " + got);
            }
        }
    }
}
