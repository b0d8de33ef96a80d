package io.github.pulsarbroadcast.it;

import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastSubscription;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.common.naming.TopicName;
import org.awaitility.Awaitility;
import org.testng.annotations.Test;

/**
 * A differential test with stock Pulsar as the reference: each consumer of a broadcast subscription must receive
 * exactly what the one consumer of a stock Failover subscription of its own receives, under random schedules of what
 * operators and devices do, played on two topics of the same broker side by side: publishing, a consumer leaving and
 * coming back under its name, topic unloads (also with every consumer away, so that admin calls meet a subscription
 * the broker does not serve), and the admin calls reset-cursor (to the earliest and the latest position, to a
 * message, by time), expire-messages (up to a message), skip, clear-backlog and a forced unsubscribe with every
 * consumer connected (their clients create the subscription anew at once) (an admin call on the broadcast
 * subscription is made on every stock subscription). Half the schedules have one consumer, half two (skip only with
 * one: with consumers at different positions, "skip n messages of the subscription" means something else than on
 * each of theirs). Ledgers roll over every 5 entries, and are retained. After each step each connected stock
 * consumer is drained until it stays quiet, and its broadcast twin must then receive the same messages in the same
 * order (anything more shows in the next step's comparison; at the end everyone connects and drains once more, and
 * nothing more may come).
 * Consumers acknowledge each message at once (no grouping, so the client's duplicate filter holds nothing), except in
 * the steps that publish three messages of which each consumer negatively acknowledges the second (a redelivery over
 * an acknowledgement hole), and those that acknowledge three cumulatively, alone or mixed with individual and negative
 * acknowledgements (added in the twenty-ninth session; seeds recorded before it play other schedules now).
 *
 * <p>Admin calls are made whether or not the broadcast subscription is served on the broker (a consumer has joined
 * since the last unload). Until the twenty-eighth session a reset-cursor or a skip made after the topic was loaded
 * again and before any broadcast consumer came back reached only the stock cursor, not the saved positions, and the
 * schedules left them out; this test found the skip's case (seed 2333375784 of the twenty-seventh session: a reset's
 * recovery window held the stock cursor below the consumer's position, the unserved skip moved that cursor only up
 * to the consumer's saved position, and the consumer got a message its stock twin had skipped). The admin call now
 * serves the subscription first ({@code AdminCallPreparation}).
 *
 * <p>A failure prints its seed and the steps played; {@code -Dbroadcast.equivalence.seed=<seed>} plays the same
 * choices again (timing against a real broker differs), {@code -Dbroadcast.equivalence.schedules=N} plays more.
 * Groups {@code integration} (2 schedules) and {@code model-broker}.
 *
 * <p>Threading: the test thread only.
 */
public class StockEquivalenceTest extends BroadcastTestBase {

    private static final long SEED = Long.getLong("broadcast.equivalence.seed", -1L);
    private static final int SCHEDULES = Integer.getInteger("broadcast.equivalence.schedules", 2);
    private static final int STEPS = 14;
    /** How long the stock consumer must stay quiet before its drain ends. */
    private static final long QUIET_MS = 500;
    /** How long it may take for the first message: longer after a step that makes consumers subscribe again. */
    private static final long FIRST_MS = 1_000;
    private static final long FIRST_AFTER_RECONNECT_MS = 3_000;

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
    public void broadcastConsumersReceiveWhatStockConsumersReceive() throws Exception {
        long base = SEED >= 0 ? SEED : System.nanoTime() & 0xffff_ffffL;
        int count = SEED >= 0 ? 1 : SCHEDULES;
        System.out.println("StockEquivalenceTest: " + count + " schedules, seeds from " + base);
        for (int i = 0; i < count; i++) {
            new Schedule(base + i).play();
        }
    }

    /** One random schedule over a stock side and a broadcast side. */
    private final class Schedule {
        final long seed;
        final Random random;
        final int consumers;
        final List<String> played = new ArrayList<>();
        int published;
        EquivalenceSide stock;
        EquivalenceSide broadcast;

        Schedule(long seed) {
            this.seed = seed;
            this.random = new Random(seed);
            this.consumers = 1 + (int) (seed & 1);
        }

        void play() throws Exception {
            String id = Long.toString(seed, 36);
            stock = new EquivalenceSide(StockEquivalenceTest.this, newTopic("equivalence-stock-" + id), false, consumers);
            broadcast = new EquivalenceSide(StockEquivalenceTest.this, newTopic("equivalence-broadcast-" + id), true, consumers);
            try {
                for (int step = 0; step < STEPS; step++) {
                    String what = step();
                    played.add(what);
                    compare(what.startsWith("reset") || what.startsWith("unload") || what.startsWith("open")
                            || what.startsWith("unsubscribe") || what.contains("negative")
                            ? FIRST_AFTER_RECONNECT_MS : FIRST_MS);
                }
                for (int i = 0; i < consumers; i++) {
                    if (!isOpen(i)) {
                        stock.cars.get(i).open();
                        broadcast.cars.get(i).open();
                    }
                }
                played.add("everyone open");
                compare(FIRST_AFTER_RECONNECT_MS);
                System.out.println("StockEquivalenceTest: seed " + seed + ", " + consumers
                        + " consumer(s), equal after " + played);
            } finally {
                for (EquivalenceSide side : new EquivalenceSide[] {stock, broadcast}) {
                    for (EquivalenceSide.Car car : side == null ? List.<EquivalenceSide.Car>of() : side.cars) {
                        if (car.consumer != null) {
                            car.close();
                        }
                    }
                }
            }
        }

        private boolean isOpen(int i) {
            return stock.cars.get(i).consumer != null;
        }

        private boolean allOpen() {
            for (int i = 0; i < consumers; i++) {
                if (!isOpen(i)) {
                    return false;
                }
            }
            return true;
        }

        /**
         * An operator deletes the subscription with its consumers connected; their clients subscribe again at once
         * and create it anew (at the latest message). Only with every consumer connected: one away would come back
         * to a broadcast subscription that exists (joining it as a name it does not know) where its stock twin's
         * subscription is gone, a difference of the reference, not of the plugin.
         */
        private String unsubscribe() throws Exception {
            nothingMore();
            admin((topic, sub) -> cluster.admin().topics().deleteSubscription(topic, sub, true));
            return "unsubscribe --force";
        }

        private boolean anyOpen() {
            for (int i = 0; i < consumers; i++) {
                if (isOpen(i)) {
                    return true;
                }
            }
            return false;
        }

        private String step() throws Exception {
            int choice = random.nextInt(published == 0 ? 2 : 13);
            switch (choice) {
                case 0: case 1:
                    return publish(1 + random.nextInt(4));
                case 2:
                    return anyOpen() ? publishWithANegativeAck() : publish(2);
                case 3:
                    return openOrClose(random.nextInt(consumers));
                case 4:
                    return unload();
                case 5:
                    if (consumers == 1 && !isOpen(0)) {
                        int n = 1 + random.nextInt(3);
                        admin((topic, sub) -> cluster.admin().topics().skipMessages(topic, sub, n));
                        return "skip " + n;
                    }
                    return publish(1);
                case 6:
                    admin((topic, sub) -> cluster.admin().topics().skipAllMessages(topic, sub));
                    return "clear-backlog";
                case 10:
                    return allOpen() ? unsubscribe() : publish(1);
                case 11:
                    return everyoneAwayThenUnload();
                case 12:
                    return anyOpen() ? publishWithCumulativeAcks() : publish(2);
                default:
                    return reset();
            }
        }

        /**
         * Before an admin call: every connected consumer has subscribed again since the last step that disconnected
         * it (after an unload or a reset the clients come back on their own; a reset made before a broadcast
         * consumer is back reaches only the stock cursor, the documented difference).
         */
        private void awaitSubscribed() {
            Awaitility.await().atMost(Duration.ofSeconds(20)).ignoreExceptions().until(() -> {
                for (int i = 0; i < consumers; i++) {
                    if (isOpen(i) && !(stock.cars.get(i).consumer.isConnected()
                            && broadcast.cars.get(i).consumer.isConnected())) {
                        return false;
                    }
                }
                return !anyOpen() || brokerSubscription(broadcast.topic, "fleet") instanceof BroadcastSubscription;
            });
        }

        private void admin(AdminCall call) throws Exception {
            awaitSubscribed();
            for (EquivalenceSide side : new EquivalenceSide[] {stock, broadcast}) {
                for (String sub : side.subscriptions()) {
                    call.on(side.topic, sub);
                }
            }
        }

        private String publish(int n) throws Exception {
            for (int i = 0; i < n; i++) {
                String value = "m-" + published++;
                for (EquivalenceSide side : new EquivalenceSide[] {stock, broadcast}) {
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

        /**
         * Before a step that disconnects consumers (their client drops what it holds): nothing more has come to a
         * broadcast consumer than to its stock twin, which was drained.
         */
        private void nothingMore() throws Exception {
            for (int i = 0; i < consumers; i++) {
                Message<String> m = isOpen(i) ? broadcast.cars.get(i).next(QUIET_MS) : null;
                if (m != null) {
                    throw new AssertionError("seed " + seed + ": after " + played + " broadcast car-" + i
                            + " received " + m.getValue() + ", which its stock twin did not");
                }
            }
        }

        /**
         * Three messages; every connected consumer acknowledges the first and the third and negatively acknowledges
         * the second, which its client then asks to have again (for a Failover subscription the Java client asks for
         * everything unacknowledged: the broker rewinds, and skips what was acknowledged individually).
         */
        private String publishWithANegativeAck() throws Exception {
            int first = published;
            publishThreeAndAcknowledge((car, three) -> {
                car.consumer.acknowledge(three.get(0));
                car.consumer.negativeAcknowledge(three.get(1));
                car.consumer.acknowledge(three.get(2));
                return three.get(2);
            });
            return "publish 3, negative ack of m-" + (first + 1);
        }

        /**
         * Three messages, acknowledged cumulatively by every connected consumer in one of four ways, each of which
         * ends with all three acknowledged or asked for again (so that no hole stays open until the next
         * reconnect): the third cumulatively; the third individually, then the second cumulatively (a cumulative
         * acknowledgement below an individual one, which must absorb it); the second individually, then the third
         * cumulatively (over it); the second cumulatively and the third negatively (redelivered, then acknowledged
         * by the drain).
         */
        private String publishWithCumulativeAcks() throws Exception {
            int first = published;
            int way = random.nextInt(4);
            publishThreeAndAcknowledge((car, three) -> {
                switch (way) {
                    case 0:
                        car.consumer.acknowledgeCumulative(three.get(2));
                        return three.get(2);
                    case 1:
                        car.consumer.acknowledge(three.get(2));
                        car.consumer.acknowledgeCumulative(three.get(1));
                        return three.get(2);
                    case 2:
                        car.consumer.acknowledge(three.get(1));
                        car.consumer.acknowledgeCumulative(three.get(2));
                        return three.get(2);
                    default:
                        car.consumer.acknowledgeCumulative(three.get(1));
                        car.consumer.negativeAcknowledge(three.get(2));
                        return three.get(1);
                }
            });
            String m1 = "m-" + (first + 1);
            String m2 = "m-" + (first + 2);
            return "publish 3, " + new String[] {"cumulative ack of " + m2,
                "ack of " + m2 + " then cumulative ack of " + m1, "ack of " + m1 + " then cumulative ack of " + m2,
                "cumulative ack of " + m1 + " and negative ack of " + m2}[way];
        }

        /**
         * Publishes three messages; every connected consumer on both sides receives them (they must be the three)
         * and acknowledges them as {@code acknowledge} says, which returns the last message it acknowledged.
         */
        private void publishThreeAndAcknowledge(Acknowledgement acknowledge) throws Exception {
            int first = published;
            publish(3);
            List<String> expected = List.of("m-" + first, "m-" + (first + 1), "m-" + (first + 2));
            for (int i = 0; i < consumers; i++) {
                if (!isOpen(i)) {
                    continue;
                }
                for (EquivalenceSide.Car car : List.of(stock.cars.get(i), broadcast.cars.get(i))) {
                    List<Message<String>> three = new ArrayList<>();
                    List<String> got = new ArrayList<>();
                    for (int k = 0; k < 3; k++) {
                        Message<String> m = car.consumer.receive(10, TimeUnit.SECONDS);
                        if (m == null) {
                            break;
                        }
                        three.add(m);
                        got.add(m.getValue());
                    }
                    if (!got.equals(expected)) {
                        throw new AssertionError("seed " + seed + ": after " + played + " "
                                + (car.side.broadcast ? "broadcast " : "stock ") + car.name() + " received " + got
                                + " of the three to acknowledge, not " + expected);
                    }
                    car.lastReceived = BroadcastReconnectTest.position(acknowledge.apply(car, three));
                }
            }
        }

        private String openOrClose(int i) throws Exception {
            boolean open = isOpen(i);
            if (open) {
                nothingMore();
            }
            for (EquivalenceSide side : new EquivalenceSide[] {stock, broadcast}) {
                if (open) {
                    side.cars.get(i).close();
                } else {
                    side.cars.get(i).open();
                }
            }
            return (open ? "close car-" : "open car-") + i;
        }

        /**
         * Every consumer leaves and both topics are unloaded, or their namespace's bundles (then no broker owns the
         * topics until something looks them up: a producer's reconnect or the admin call itself): the broker holds the
         * broadcast subscription as a plain one until a consumer or an admin call needs it.
         */
        private String everyoneAwayThenUnload() throws Exception {
            for (int i = 0; i < consumers; i++) {
                if (isOpen(i)) {
                    openOrClose(i);
                }
            }
            if (random.nextBoolean()) {
                unload();
                return "everyone away, unload";
            }
            nothingMore();
            cluster.admin().namespaces().unload(TopicName.get(broadcast.topic).getNamespace());
            return "everyone away, bundle unload";
        }

        private String unload() throws Exception {
            nothingMore();
            List<EquivalenceSide.Car> open = new ArrayList<>();
            for (EquivalenceSide side : new EquivalenceSide[] {stock, broadcast}) {
                side.cars.stream().filter(c -> c.consumer != null).forEach(open::add);
            }
            try { // a close sends its acknowledgements before it: only the connected ones may have some on the way
                Awaitility.await().atMost(Duration.ofSeconds(10))
                        .until(() -> open.stream().allMatch(EquivalenceSide.Car::settled));
            } catch (org.awaitility.core.ConditionTimeoutException e) {
                StringBuilder where = new StringBuilder();
                open.forEach(c -> where.append("; ").append(c.describe()));
                throw new AssertionError("seed " + seed + ": after " + played + " the acknowledgements did not"
                        + " settle before an unload" + where, e);
            }
            cluster.admin().topics().unload(stock.topic);
            cluster.admin().topics().unload(broadcast.topic);
            return "unload";
        }

        private String reset() throws Exception {
            nothingMore();
            awaitSubscribed();
            int kind = random.nextInt(5);
            int index = random.nextInt(published);
            for (EquivalenceSide side : new EquivalenceSide[] {stock, broadcast}) {
                for (String sub : side.subscriptions()) {
                    switch (kind) {
                        case 0:
                            cluster.admin().topics().resetCursor(side.topic, sub, MessageId.earliest);
                            break;
                        case 1:
                            cluster.admin().topics().resetCursor(side.topic, sub, MessageId.latest);
                            break;
                        case 2:
                            cluster.admin().topics().resetCursor(side.topic, sub, side.ids.get(index));
                            break;
                        case 3:
                            cluster.admin().topics().resetCursor(side.topic, sub, side.publishTimes.get(index));
                            break;
                        default:
                            cluster.admin().topics().expireMessages(side.topic, sub, side.ids.get(index), false);
                            break;
                    }
                }
            }
            return new String[] {"reset earliest", "reset latest", "reset to m-" + index,
                "reset by time to m-" + index, "expire up to m-" + index}[kind];
        }

        /** For each connected consumer: drains the stock one until quiet; the broadcast one must receive the same. */
        private void compare(long firstMs) throws Exception {
            for (int i = 0; i < consumers; i++) {
                if (isOpen(i)) {
                    compare(stock.cars.get(i), broadcast.cars.get(i), firstMs);
                }
            }
        }

        private void compare(EquivalenceSide.Car reference, EquivalenceSide.Car car, long firstMs) throws Exception {
            List<String> expected = new ArrayList<>();
            Message<String> m;
            for (long wait = firstMs; (m = reference.next(wait)) != null; wait = QUIET_MS) {
                expected.add(m.getValue());
            }
            List<String> got = new ArrayList<>();
            for (int i = 0; i < expected.size() && (m = car.next(10_000)) != null; i++) {
                got.add(m.getValue());
            }
            // Anything more is seen by the next step's comparison; after the last step, wait for it here.
            if (got.equals(expected) && played.size() > STEPS && (m = car.next(3 * QUIET_MS)) != null) {
                got.add(m.getValue());
            }
            if (!got.equals(expected)) {
                throw new AssertionError("seed " + seed + " (-Dbroadcast.equivalence.seed=" + seed + "), "
                        + consumers + " consumer(s): after " + played + " the stock " + car.name() + " received "
                        + expected + ", the broadcast one " + got);
            }
        }
    }

    /** How a consumer acknowledges three messages it received; returns the last one it acknowledged. */
    private interface Acknowledgement {
        Message<String> apply(EquivalenceSide.Car car, List<Message<String>> three) throws Exception;
    }

    /** An admin call on one subscription of a topic. */
    private interface AdminCall {
        void on(String topic, String subscription) throws Exception;
    }
}
