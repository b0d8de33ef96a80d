package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertNotEquals;
import static org.testng.Assert.assertTrue;

import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.testng.annotations.BeforeClass;
import org.testng.annotations.Test;

/**
 * Issue 13's test: 1,000 broadcast consumers on two brokers, one of them far behind (it never receives; 100
 * messages by default, see {@link #MESSAGES}).
 * The topic moves gracefully (its broker restarts) or its broker crashes. Every other consumer resumes at its own
 * saved position, so it sees again at most what it acknowledged within one sync interval (here nothing: it had
 * acknowledged everything a second before the move); before issue 13 each resumed at the laggard's position and got
 * every message again. The laggard then receives every message, in order: nothing lost. After the crash a new name
 * joins in the recovery window and gets exactly what was published after the crash: it starts at the last save's join
 * floor, not at the laggard's position.
 *
 * <p>In the default suite (about 2.5 minutes on 2 cores) and in group {@code positions-scale}, which runs it alone:
 * {@code ./mvnw -B -ntp verify -pl integration-tests -am -Dgroups=positions-scale
 * -Dsurefire.failIfNoSpecifiedTests=false}.
 *
 * <p>Threading: the test thread drives; the client's listener threads record into per-consumer synchronized lists.
 */
public class BroadcastPositionsAcrossMovesTest extends BroadcastTestBase {

    private static final int CONSUMERS = 1_000;
    /** How far the laggard is behind; the figure is 1,000 ({@code -Dbroadcast.positions.messages=1000}), 100
     *  keeps the default suite within its time budget (100,000 deliveries before the move instead of 1,000,000). */
    private static final int MESSAGES = Integer.getInteger("broadcast.positions.messages", 100);
    /** Duplicates allowed per consumer: what it acknowledged within one sync interval before the move (none). */
    private static final int MAX_DUPLICATES = 0;

    @Override
    protected void configureBroker(ServiceConfiguration conf) {
        conf.getProperties().setProperty("broadcastMarkDeleteIntervalMs", "100");
        conf.getProperties().setProperty("broadcastPositionSyncIntervalMs", "200");
    }

    @BeforeClass(alwaysRun = true)
    public void addSecondBroker() throws Exception {
        cluster.addBroker();
    }


    private void runMove(String topic, boolean crash) throws Exception {
        String url = everyBrokerServiceUrl();
        // The stock client's reconnect back-off capped at 5 s, as in the process cluster's chaos tests: after the crash
        // its lookups alternate between the two brokers of the service URL (round robin), so half of each round of
        // retries meets the dead one and doubles its back-off; of 1,000 consumers one fails ten times in a row and,
        // with the default 60 s cap, is still waiting when the test gives up (the open finding of issue 13).
        PulsarClient c = PulsarClient.builder().serviceUrl(url).maxBackoffInterval(5, TimeUnit.SECONDS).build();
        closeAfterTest(c);
        Consumer<String> laggard = Broadcast.configure(c.newConsumer(Schema.STRING)).topic(topic)
                .subscriptionName("fleet").consumerName("laggard").receiverQueueSize(1).subscribe();
        closeAfterTest(laggard);
        List<List<String>> received = new ArrayList<>();
        List<CompletableFuture<Consumer<String>>> subscribes = new ArrayList<>();
        for (int i = 0; i < CONSUMERS - 1; i++) {
            List<String> got = Collections.synchronizedList(new ArrayList<>());
            received.add(got);
            subscribes.add(Broadcast.configure(c.newConsumer(Schema.STRING)).topic(topic).subscriptionName("fleet")
                    .consumerName(String.format("vehicle-%04d", i)).receiverQueueSize(100)
                    .messageListener((cons, msg) -> {
                        got.add(msg.getValue());
                        cons.acknowledgeAsync(msg);
                    }).subscribeAsync());
        }
        java.util.Map<String, Consumer<String>> consumersByName = new java.util.HashMap<>();
        for (CompletableFuture<Consumer<String>> s : subscribes) {
            Consumer<String> consumer = s.get(60, TimeUnit.SECONDS);
            closeAfterTest(consumer);
            consumersByName.put(consumer.getConsumerName(), consumer);
        }
        Producer<String> producer = c.newProducer(Schema.STRING).topic(topic).enableBatching(false)
                .sendTimeout(0, TimeUnit.SECONDS).create();
        closeAfterTest(producer);
        List<String> sent = sendAll(producer, "m", MESSAGES);
        try {
            await().atMost(Duration.ofSeconds(180)).until(() -> received.stream().allMatch(r -> size(r) >= MESSAGES));
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            throw new AssertionError("not everyone received the " + MESSAGES + " messages: "
                    + received.stream().mapToInt(BroadcastPositionsAcrossMovesTest::size).summaryStatistics(), e);
        }
        // Every acknowledgement applied on the broker (the client groups them for 100 ms), then one save interval.
        int owner = ownerIndex(topic);
        // Everyone but the laggard at the last entry: "two positions" alone was also met by a moment where every
        // consumer stood at the same earlier entry (the client sends a connection's grouped acks together), and a CI
        // run on 2026-11-28 crashed the broker with 602 consumers' acks of m-61..m-99 not yet applied (78 duplicates).
        // (The owner's topic object read in the condition: a README run on 2026-11-28 found it missing for a moment.)
        await().atMost(Duration.ofSeconds(60)).ignoreExceptions().until(() -> {
            String last = ((org.apache.pulsar.broker.service.persistent.PersistentTopic) cluster.brokers().get(owner)
                    .getBrokerService().getTopicReference(topic).orElseThrow()).getManagedLedger()
                    .getLastConfirmedEntry().toString();
            java.util.Map<String, Integer> acked = ackedOnBroker(owner, topic);
            return acked.size() == 2 && Integer.valueOf(CONSUMERS - 1).equals(acked.get(last));
        });
        await().pollDelay(Duration.ofMillis(500)).until(() -> true);
        int[] before = received.stream().mapToInt(BroadcastPositionsAcrossMovesTest::size).toArray();
        System.out.println("BroadcastPositionsAcrossMovesTest before the " + (crash ? "crash" : "move") + ": "
                + ackedOnBroker(owner, topic));
        Consumer<String> newcomer = null;
        if (crash) {
            cluster.crashBroker(owner);
            // A name the last save does not hold, joining in the recovery window: it starts at the save's join floor
            // (the tail when it was captured, after m-99), not at the laggard's mark-delete position.
            newcomer = Broadcast.configure(c.newConsumer(Schema.STRING)).topic(topic).subscriptionName("fleet")
                    .consumerName("newcomer").receiverQueueSize(200).subscribe();
            closeAfterTest(newcomer);
        } else {
            cluster.restartBroker(owner);
            assertNotEquals(ownerIndex(topic), owner, "the topic did not move");
        }
        List<String> afterMove = sendAll(producer, "n", 10);
        sent.addAll(afterMove);
        try {
            await().atMost(Duration.ofSeconds(120)).until(() -> received.stream()
                    .allMatch(r -> snapshot(r).contains("n-9")));
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            List<List<String>> resumed = new ArrayList<>();
            List<Integer> resumedBefore = new ArrayList<>();
            for (int i = 0; i < received.size(); i++) {
                if (snapshot(received.get(i)).contains("n-9")) {
                    resumed.add(received.get(i));
                    resumedBefore.add(before[i]);
                }
            }
            report((crash ? "crash" : "graceful move") + " (those that resumed)", resumed,
                    resumedBefore.stream().mapToInt(Integer::intValue).toArray(), sent);
            long done = received.stream().filter(r -> snapshot(r).contains("n-9")).count();
            int stuck = 0;
            while (stuck < received.size() && snapshot(received.get(stuck)).contains("n-9")) {
                stuck++;
            }
            List<String> example = snapshot(received.get(Math.min(stuck, received.size() - 1)));
            throw new AssertionError(done + " of " + received.size() + " consumers got the last message; vehicle-"
                    + stuck + " got " + example.size() + " messages after " + before[Math.min(stuck,
                    received.size() - 1)] + ", last " + example.subList(Math.max(0, example.size() - 3),
                    example.size()) + "; on the new owner: " + memberState(topic, String.format("vehicle-%04d", stuck))
                    + "; client: " + clientState(consumersByName, String.format("vehicle-%04d", stuck)), e);
        }
        report(crash ? "crash" : "graceful move", received, before, sent);
        if (newcomer != null) {
            List<String> newcomerGot = new ArrayList<>();
            for (Message<String> m = newcomer.receive(5, TimeUnit.SECONDS); m != null;
                 m = newcomer.receive(2, TimeUnit.SECONDS)) {
                newcomerGot.add(m.getValue());
                newcomer.acknowledge(m);
            }
            // Before the join floor it started at the laggard's position and got m-0..m-99 first.
            assertEquals(newcomerGot, afterMove, "a new name after the crash gets what followed the last save");
        }
        List<String> laggardGot = new ArrayList<>();
        for (int i = 0; i < sent.size(); i++) {
            Message<String> m = laggard.receive(30, TimeUnit.SECONDS);
            assertTrue(m != null, "the laggard got " + i + " of " + sent.size());
            laggardGot.add(m.getValue());
            laggard.acknowledge(m);
        }
        assertEquals(laggardGot, sent, "the laggard receives everything, in order");
    }

    /** What the current owner knows of {@code name}: attached (with its cursor) or not. */
    private String memberState(String topic, String name) {
        try {
            int owner = ownerIndex(topic);
            io.github.pulsarbroadcast.broadcast.dispatch.BroadcastDispatcher d = dispatcherOn(owner, topic, "fleet");
            for (org.apache.pulsar.broker.service.Consumer c : d.getConsumers()) {
                if (c.consumerName().equals(name)) {
                    return "attached to broker " + owner + ": " + d.member(c) + " " + d.member(c).cursor();
                }
            }
            return "not attached to broker " + owner + " (" + d.getConsumers().size() + " attached, "
                    + d.parkedCount() + " retained)";
        } catch (Exception e) {
            return "unknown: " + e;
        }
    }

    private static String clientState(java.util.Map<String, Consumer<String>> consumers, String name) {
        Consumer<String> c = consumers.get(name);
        return c == null ? "none" : "connected " + c.isConnected() + ", " + c + ", " + handlerState(c);
    }

    /** The stock client's reconnect state of {@code consumer} (its connection handler's fields), for the report. */
    private static String handlerState(Consumer<String> consumer) {
        try {
            java.lang.reflect.Field handlerField = consumer.getClass().getDeclaredField("connectionHandler");
            handlerField.setAccessible(true);
            Object handler = handlerField.get(consumer);
            StringBuilder out = new StringBuilder("handler");
            for (String name : new String[] {"clientCnx", "duringConnect", "state"}) {
                java.lang.reflect.Field f = handler.getClass().getDeclaredField(name);
                f.setAccessible(true);
                Object v = f.get(handler);
                out.append(' ').append(name).append('=').append(name.equals("state") ? stateOf(v) : v);
            }
            return out.toString();
        } catch (ReflectiveOperationException | RuntimeException e) {
            return "handler state unknown: " + e;
        }
    }

    /** {@code HandlerState.getState()} of {@code handlerState} (protected in the stock client). */
    private static Object stateOf(Object handlerState) throws ReflectiveOperationException {
        for (Class<?> k = handlerState.getClass(); k != null; k = k.getSuperclass()) {
            try {
                java.lang.reflect.Method getState = k.getDeclaredMethod("getState");
                getState.setAccessible(true);
                return getState.invoke(handlerState);
            } catch (NoSuchMethodException e) {
                // declared higher up
            }
        }
        throw new NoSuchMethodException("getState");
    }

    /** How many consumers the owning broker has at each acknowledged position (the laggard included). */
    private java.util.Map<String, Integer> ackedOnBroker(int owner, String topic) {
        io.github.pulsarbroadcast.broadcast.dispatch.BroadcastDispatcher d = dispatcherOn(owner, topic, "fleet");
        java.util.Map<String, Integer> counts = new java.util.TreeMap<>();
        for (org.apache.pulsar.broker.service.Consumer consumer : d.getConsumers()) {
            io.github.pulsarbroadcast.broadcast.cursor.VirtualCursor cursor = d.member(consumer).cursor();
            counts.merge(cursor.acknowledged() + (cursor.individualAckRanges() > 0 ? "+ranges" : ""), 1,
                    Integer::sum);
        }
        return counts;
    }

    private static List<String> sendAll(Producer<String> producer, String prefix, int n) throws Exception {
        List<String> values = new ArrayList<>();
        List<CompletableFuture<MessageId>> sends = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            values.add(prefix + "-" + i);
            sends.add(producer.sendAsync(prefix + "-" + i));
        }
        CompletableFuture.allOf(sends.toArray(new CompletableFuture[0])).get(120, TimeUnit.SECONDS);
        return values;
    }

    /** Duplicates per consumer after the move (P50, P99, max), and that each got every message, in order. */
    private static void report(String what, List<List<String>> received, int[] before, List<String> sent) {
        int[] duplicates = new int[received.size()];
        for (int i = 0; i < received.size(); i++) {
            List<String> got = snapshot(received.get(i));
            List<String> after = got.subList(before[i], got.size());
            duplicates[i] = (int) after.stream().filter(v -> v.startsWith("m-")).count();
            assertEquals(new ArrayList<>(new java.util.LinkedHashSet<>(got)), sent, "consumer " + i + " first"
                    + " deliveries");
        }
        Arrays.sort(duplicates);
        System.out.printf("BroadcastPositionsAcrossMovesTest %s: %d consumers, duplicates per consumer P50 %d, P99 %d,"
                        + " max %d (before issue 13: %d each)%n", what, duplicates.length,
                duplicates[duplicates.length / 2], duplicates[duplicates.length * 99 / 100],
                duplicates[duplicates.length - 1], MESSAGES);
        assertTrue(duplicates[duplicates.length - 1] <= MAX_DUPLICATES, what + ": " + duplicates[duplicates.length - 1]
                + " duplicates");
    }

    private static int size(List<String> list) {
        synchronized (list) {
            return list.size();
        }
    }

    private static List<String> snapshot(List<String> list) {
        synchronized (list) {
            return new ArrayList<>(list);
        }
    }

    @Test(groups = {"integration", "positions-scale"}, timeOut = 600_000)
    public void aGracefulMoveSendsNobodyBackToTheLaggard() throws Exception {
        String topic = newTopic("positions-move");
        cluster.admin().topics().createNonPartitionedTopic(topic);
        runMove(topic, false);
    }

    /** Runs last: it leaves one broker dead. */
    @Test(groups = {"integration", "positions-scale"}, timeOut = 600_000, priority = 1)
    public void aCrashSendsNobodyBackToTheLaggard() throws Exception {
        String topic = newTopic("positions-crash");
        cluster.admin().topics().createNonPartitionedTopic(topic);
        runMove(topic, true);
    }
}
