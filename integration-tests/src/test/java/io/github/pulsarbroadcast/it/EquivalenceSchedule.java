package io.github.pulsarbroadcast.it;

import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastSubscription;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.common.naming.TopicName;
import org.awaitility.Awaitility;

/**
 * One random schedule of {@link StockEquivalenceTest} over a stock side and a broadcast side: its steps, and the
 * comparison after each (the acknowledgement steps are {@link EquivalenceAcks}).
 *
 * <p>Threading: the test thread only.
 */
final class EquivalenceSchedule {

    static final int STEPS = 14;
    /** How long the stock consumer must stay quiet before its drain ends. */
    static final long QUIET_MS = 500;
    /** The consumers' receiver queues, by the seed's third and fourth bits: the Java client's default, and small. */
    private static final int[] RECEIVER_QUEUES = {1_000, 1, 2, 1_000};
    /** How long it may take for the first message: longer after a step that makes consumers subscribe again. */
    private static final long FIRST_MS = 1_000;
    private static final long FIRST_AFTER_RECONNECT_MS = 3_000;

    final BroadcastTestBase test;
    private final EquivalenceAcks acks = new EquivalenceAcks(this);
    private final EquivalenceEnds ends = new EquivalenceEnds(this);
    private final EquivalenceResets resets = new EquivalenceResets(this);
    final long seed;
    final Random random;
    final int consumers;
    /** Whether the producers batch (the seed's second bit): a publish step then sends its messages in batches. */
    final boolean batched;
    final int receiverQueue;
    final List<String> played = new ArrayList<>();
    int published;
    /** Both topics were terminated: nothing is published any more, and the ends told are compared. */
    boolean terminated;
    EquivalenceSide stock;
    EquivalenceSide broadcast;

    EquivalenceSchedule(BroadcastTestBase test, long seed) {
        this.test = test;
        this.seed = seed;
        this.random = new Random(seed);
        this.consumers = 1 + (int) (seed & 1);
        this.batched = (seed >>> 1 & 1) == 1;
        this.receiverQueue = RECEIVER_QUEUES[(int) (seed >>> 2 & 3)];
    }

    void play() throws Exception {
        String id = Long.toString(seed, 36);
        stock = new EquivalenceSide(test, test.newTopic("equivalence-stock-" + id), false, consumers, batched,
                receiverQueue);
        broadcast = new EquivalenceSide(test, test.newTopic("equivalence-broadcast-" + id), true, consumers,
                batched, receiverQueue);
        try {
            for (int step = 0; step < STEPS; step++) {
                String what = step();
                played.add(what);
                compare(what.startsWith("reset") || what.startsWith("unload") || what.startsWith("open")
                        || what.startsWith("move")
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
            System.out.println("StockEquivalenceTest: seed " + seed + ", " + consumers + " consumer(s)"
                    + (batched ? ", batched" : "") + ", receiver queue " + receiverQueue + ", equal after " + played);
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

    boolean isOpen(int i) {
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
        admin((topic, sub) -> test.cluster.admin().topics().deleteSubscription(topic, sub, true));
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
        int choice = random.nextInt(published == 0 ? 2 : 15);
        switch (choice) {
            case 0: case 1:
                return publish(1 + random.nextInt(4));
            case 2:
                // Not with a receiver queue of 1: stock then sends a message acknowledged above the hole again (seed
                // 3828905972), where the plugin skips it as stock does with any larger queue (design.md).
                return anyOpen() && !terminated && receiverQueue > 1 ? acks.publishWithANegativeAck() : publish(2);
            case 3:
                return openOrClose(random.nextInt(consumers));
            case 4:
                return unload();
            case 5:
                if (consumers == 1 && !isOpen(0)) {
                    int n = 1 + random.nextInt(3);
                    admin((topic, sub) -> test.cluster.admin().topics().skipMessages(topic, sub, n));
                    return "skip " + n;
                }
                return publish(1);
            case 6:
                admin((topic, sub) -> test.cluster.admin().topics().skipAllMessages(topic, sub));
                return "clear-backlog";
            case 10:
                return allOpen() ? unsubscribe() : publish(1);
            case 11:
                return everyoneAwayThenUnload();
            case 12:
                return anyOpen() && !terminated ? acks.publishWithCumulativeAcks() : publish(2);
            case 13:
                return terminated || played.size() < STEPS / 2 ? publish(1) : terminate();
            case 14:
                return move();
            default:
                return resets.reset();
        }
    }

    /**
     * Before an admin call: every connected consumer has subscribed again since the last step that disconnected
     * it (after an unload or a reset the clients come back on their own; a reset made before a broadcast
     * consumer is back reaches only the stock cursor, the documented difference).
     */
    void awaitSubscribed() {
        Awaitility.await().atMost(Duration.ofSeconds(20)).ignoreExceptions().until(() -> {
            for (int i = 0; i < consumers; i++) {
                if (isOpen(i) && !(stock.cars.get(i).consumer.isConnected()
                        && broadcast.cars.get(i).consumer.isConnected())) {
                    return false;
                }
            }
            return !anyOpen() || test.brokerSubscription(broadcast.topic, "fleet") instanceof BroadcastSubscription;
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

    String publish(int n) throws Exception {
        if (terminated) {
            return "(publish " + n + ": terminated)";
        }
        List<Integer> batches = new ArrayList<>();
        for (int left = n; left > 0; ) {
            int k = batched ? 1 + random.nextInt(left) : 1;
            publishTogether(k);
            batches.add(k);
            left -= k;
        }
        return "publish " + n + (batched ? " in batches of " + batches : "");
    }

    /** Publishes {@code k} messages on each side, as one batch when the producers batch. */
    private void publishTogether(int k) throws Exception {
        int first = published;
        published += k;
        for (EquivalenceSide side : new EquivalenceSide[] {stock, broadcast}) {
            side.publish(first, k, batched);
        }
        // Publish times one millisecond apart at least, so a reset by time names one entry on each side.
        long now = System.currentTimeMillis();
        Awaitility.await().pollInterval(Duration.ofMillis(1)).atMost(Duration.ofSeconds(5))
                .until(() -> System.currentTimeMillis() > now);
    }

    /**
     * Before a step that disconnects consumers (their client drops what it holds): nothing more has come to a
     * broadcast consumer than to its stock twin, which was drained.
     */
    void nothingMore() throws Exception {
        for (int i = 0; i < consumers; i++) {
            Message<String> m = isOpen(i) ? broadcast.cars.get(i).next(QUIET_MS) : null;
            if (m != null) {
                throw new AssertionError(where() + "broadcast car-" + i
                        + " received " + m.getValue() + ", which its stock twin did not");
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
        test.cluster.admin().namespaces().unload(TopicName.get(broadcast.topic).getNamespace());
        return "everyone away, bundle unload";
    }

    private String unload() throws Exception {
        settle();
        test.cluster.admin().topics().unload(stock.topic);
        test.cluster.admin().topics().unload(broadcast.topic);
        return "unload";
    }

    /**
     * A rolling restart moves the topics (added in the thirty-fifth session): the broker that owns the broadcast
     * topic stops gracefully (it unloads its topics: the plugin saves its positions, stock its cursors) and starts
     * again, and the clients, whose service URL names both brokers, find the topic on the other one. The stock topic
     * moves with it when that broker owns it too, else it is unloaded, so that both sides' consumers reconnect.
     * The label says where the topics went (2.10's load manager may hand them back to the restarted broker).
     */
    private String move() throws Exception {
        settle();
        int from = test.ownerIndex(broadcast.topic);
        boolean together = test.ownerIndex(stock.topic) == from;
        test.cluster.restartBroker(from);
        if (!together) {
            test.cluster.admin().topics().unload(stock.topic);
        }
        awaitSubscribed();
        return "move from broker " + from + " to " + test.ownerIndex(broadcast.topic)
                + (together ? "" : " (the stock topic unloaded)");
    }

    /**
     * Before a step that disconnects every consumer: nothing more is on the way to a broadcast consumer, and the
     * broker has every acknowledgement of what each connected consumer received.
     */
    private void settle() throws Exception {
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
            throw new AssertionError(where() + "the acknowledgements did not"
                    + " settle before an unload" + where, e);
        }
    }

    /**
     * Both topics are terminated (late in a schedule: nothing is published after it). From then on each comparison
     * also compares the end of the topic told to each pair of consumers (added in the thirty-second session; seeds
     * recorded before it play other schedules now).
     */
    private String terminate() throws Exception {
        for (EquivalenceSide side : new EquivalenceSide[] {stock, broadcast}) {
            test.cluster.admin().topics().terminateTopic(side.topic);
        }
        terminated = true;
        return "terminate";
    }

    /**
     * For each connected consumer: drains the stock one until quiet; the broadcast one must receive the same, and
     * be told the end of the topic when the stock one is (everything it received is acknowledged by then).
     */
    private void compare(long firstMs) throws Exception {
        for (int i = 0; i < consumers; i++) {
            if (isOpen(i)) {
                compare(stock.cars.get(i), broadcast.cars.get(i), firstMs);
                ends.compare(stock.cars.get(i), broadcast.cars.get(i));
            }
        }
    }

    private void compare(EquivalenceSide.Car reference, EquivalenceSide.Car car, long firstMs) throws Exception {
        List<String> expected = new ArrayList<>();
        Message<String> m;
        for (long wait = firstMs; (m = reference.next(wait)) != null; wait = QUIET_MS) {
            expected.add(m.getValue());
        }
        ends.checkNotToldEarly(car, expected);
        List<String> got = new ArrayList<>();
        for (int i = 0; i < expected.size() && (m = car.next(10_000)) != null; i++) {
            got.add(m.getValue());
        }
        // Anything more is seen by the next step's comparison; after the last step, wait for it here.
        if (got.equals(expected) && played.size() > STEPS && (m = car.next(3 * QUIET_MS)) != null) {
            got.add(m.getValue());
        }
        if (!got.equals(expected)) {
            throw new AssertionError(where() + "the stock " + car.name() + " received " + expected
                    + ", the broadcast one " + got);
        }
    }

    /** How a failure starts: the seed that plays the schedule again, and the steps played so far. */
    String where() {
        return "seed " + seed + " (-Dbroadcast.equivalence.seed=" + seed + "), " + consumers + " consumer(s)"
                + (batched ? ", batched" : "") + ", receiver queue " + receiverQueue + ": after " + played + " ";
    }

    /** An admin call on one subscription of a topic. */
    private interface AdminCall {
        void on(String topic, String subscription) throws Exception;
    }
}
