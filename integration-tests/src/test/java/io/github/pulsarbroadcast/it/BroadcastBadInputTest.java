package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertNotEquals;
import static org.testng.Assert.assertNotNull;
import static org.testng.Assert.assertTrue;
import static org.testng.Assert.expectThrows;

import io.github.pulsarbroadcast.broadcast.BroadcastMode;
import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastConsumer;
import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastDispatcher;
import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastSubscription;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.PulsarClientException.ConsumerBusyException;
import org.apache.pulsar.client.api.PulsarClientException.NotAllowedException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionType;
import org.apache.pulsar.client.impl.ClientCnx;
import org.apache.pulsar.client.impl.ConsumerImpl;
import org.apache.pulsar.client.impl.MessageIdImpl;
import org.apache.pulsar.common.api.proto.CommandAck.AckType;
import org.apache.pulsar.common.protocol.Commands;
import org.testng.Assert.ThrowingRunnable;
import org.testng.annotations.Test;

/**
 * Bad input from clients: every mistake gets a clear error that names what is wrong and what is allowed, and costs
 * the consumers already on the subscription nothing (they still get every message, and the subscription's cursor
 * never moves past what they have acknowledged).
 *
 * <p>Threading: TestNG's test thread only.
 */
public class BroadcastBadInputTest extends BroadcastTestBase {

    private static final String KEY_VALUE = BroadcastMode.KEY + "=" + BroadcastMode.BROADCAST;

    @Override
    protected void configureBroker(ServiceConfiguration conf) {
        // Sync the subscription's cursor often, so "it did not move" is observed over several syncs.
        conf.getProperties().setProperty("broadcastMarkDeleteIntervalMs", "100");
    }

    // ----- who may join which subscription -----

    @Test(groups = "integration", timeOut = 120_000)
    public void plainConsumersAreRefusedOnABroadcastSubscription() throws Exception {
        String topic = newTopic("plain-on-broadcast");
        List<Consumer<String>> fleet = broadcastConsumers(topic, "fleet", 2);
        try (Producer<String> producer = producer(topic)) {
            List<String> expected = new ArrayList<>(publish(producer, "before", 5));
            for (SubscriptionType type : List.of(SubscriptionType.Failover, SubscriptionType.Exclusive)) {
                assertRefused(NotAllowedException.class, () -> client.newConsumer(Schema.STRING).topic(topic)
                        .subscriptionName("fleet").subscriptionType(type).consumerName("plain-" + type)
                        .subscribe(), "fleet", "broadcast subscription", "Failover", KEY_VALUE);
            }
            expected.addAll(publish(producer, "after", 5));
            assertEveryoneReceives(fleet, expected);
            assertTrue(brokerSubscription(topic, "fleet") instanceof BroadcastSubscription);
            assertEquals(dispatcher(topic, "fleet").getConsumers().size(), 2, "consumers of the subscription");
        } finally {
            closeAll(fleet);
        }
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void plainConsumerIsRefusedOnABroadcastSubscriptionWithNobodyConnected() throws Exception {
        String topic = newTopic("plain-on-idle-broadcast");
        broadcastConsumer(topic, "fleet", "gone").close();
        assertRefused(NotAllowedException.class, () -> client.newConsumer(Schema.STRING).topic(topic)
                .subscriptionName("fleet").subscriptionType(SubscriptionType.Failover).subscribe(),
                "broadcast subscription", KEY_VALUE);
        assertTrue(brokerSubscription(topic, "fleet") instanceof BroadcastSubscription,
                "the subscription was replaced: " + brokerSubscription(topic, "fleet"));
        // And a broadcast consumer still joins it.
        try (Consumer<String> back = broadcastConsumer(topic, "fleet", "back");
             Producer<String> producer = producer(topic)) {
            List<String> sent = publish(producer, "m", 3);
            assertEquals(receive(back, 3), sent);
        }
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void broadcastConsumerIsRefusedOnAPlainSubscription() throws Exception {
        String topic = newTopic("broadcast-on-plain");
        try (Consumer<String> stock = client.newConsumer(Schema.STRING).topic(topic).subscriptionName("plain")
                .subscriptionType(SubscriptionType.Exclusive).consumerName("stock").subscribe();
             Producer<String> producer = producer(topic)) {
            List<String> expected = new ArrayList<>(publish(producer, "before", 5));
            assertRefused(NotAllowedException.class, () -> broadcastConsumer(topic, "plain", "intruder"),
                    "'plain'", "not a broadcast subscription", BroadcastMode.KEY);
            expected.addAll(publish(producer, "after", 5));
            assertEquals(receive(stock, expected.size()), expected);
            assertFalse(brokerSubscription(topic, "plain") instanceof BroadcastSubscription);
            assertFalse(brokerSubscription(topic, "plain").getSubscriptionProperties()
                    .containsKey(BroadcastMode.KEY), "the plain subscription was marked broadcast");
        }
        // Also when its consumer has gone: it stays a plain subscription.
        assertRefused(NotAllowedException.class, () -> broadcastConsumer(topic, "plain", "intruder"),
                "not a broadcast subscription");
        assertFalse(brokerSubscription(topic, "plain") instanceof BroadcastSubscription);
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void broadcastKeyNeedsFailover() throws Exception {
        String topic = newTopic("wrong-type");
        List<Consumer<String>> fleet = broadcastConsumers(topic, "fleet", 2);
        try (Producer<String> producer = producer(topic)) {
            List<String> expected = new ArrayList<>(publish(producer, "before", 5));
            for (SubscriptionType type : List.of(SubscriptionType.Shared, SubscriptionType.Key_Shared,
                    SubscriptionType.Exclusive)) {
                for (String subscription : List.of("fleet", "new-" + type)) {
                    assertRefused(NotAllowedException.class, () -> Broadcast.configure(
                            client.newConsumer(Schema.STRING)).subscriptionType(type).topic(topic)
                            .subscriptionName(subscription).consumerName("wrong-" + type).subscribe(),
                            KEY_VALUE, "Failover", type.name());
                }
                assertFalse(subscriptions(topic).contains("new-" + type), "refused subscribe created a subscription");
            }
            expected.addAll(publish(producer, "after", 5));
            assertEveryoneReceives(fleet, expected);
            assertEquals(dispatcher(topic, "fleet").getConsumers().size(), 2);
        } finally {
            closeAll(fleet);
        }
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void consumerNamesAreUniqueWithinASubscription() throws Exception {
        String topic = newTopic("same-name");
        PulsarClient otherClient = newClient();
        try (Consumer<String> first = broadcastConsumer(topic, "fleet", "vehicle-1");
             Producer<String> producer = producer(topic)) {
            List<String> expected = new ArrayList<>(publish(producer, "before", 5));
            // From the same connection and from another one.
            assertRefused(ConsumerBusyException.class, () -> broadcastConsumer(topic, "fleet", "vehicle-1"),
                    "vehicle-1", "unique");
            assertRefused(ConsumerBusyException.class, () -> Broadcast.configure(otherClient.newConsumer(
                    Schema.STRING)).topic(topic).subscriptionName("fleet").consumerName("vehicle-1").subscribe(),
                    "vehicle-1", "unique");
            expected.addAll(publish(producer, "after", 5));
            assertEquals(receive(first, expected.size()), expected);
            assertEquals(dispatcher(topic, "fleet").getConsumers().size(), 1);
            assertTrue(first.isConnected());
        } finally {
            otherClient.close();
        }
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void unknownModeIsRefusedNamingTheAllowedValue() throws Exception {
        String topic = newTopic("multicast");
        List<Consumer<String>> fleet = broadcastConsumers(topic, "fleet", 1);
        try (Producer<String> producer = producer(topic)) {
            List<String> expected = new ArrayList<>(publish(producer, "before", 3));
            for (String subscription : List.of("fleet", "other")) {
                assertRefused(NotAllowedException.class, () -> client.newConsumer(Schema.STRING).topic(topic)
                        .subscriptionName(subscription).subscriptionType(SubscriptionType.Failover)
                        .subscriptionProperties(Map.of(BroadcastMode.KEY, "multicast")).subscribe(),
                        "Subscription property", BroadcastMode.KEY + "=multicast", "'broadcast'");
                assertRefused(NotAllowedException.class, () -> client.newConsumer(Schema.STRING).topic(topic)
                        .subscriptionName(subscription).subscriptionType(SubscriptionType.Failover)
                        .property(BroadcastMode.KEY, "multicast").subscribe(),
                        "Consumer property", BroadcastMode.KEY + "=multicast", "'broadcast'");
            }
            assertFalse(subscriptions(topic).contains("other"), "refused subscribe created a subscription");
            expected.addAll(publish(producer, "after", 3));
            assertEveryoneReceives(fleet, expected);
        } finally {
            closeAll(fleet);
        }
    }

    @Test(groups = "integration", timeOut = 60_000)
    public void nonPersistentTopicIsRefused() throws Exception {
        String topic = "non-persistent://public/default/np-" + java.util.UUID.randomUUID().toString().substring(0, 8);
        assertRefused(NotAllowedException.class, () -> broadcastConsumer(topic, "fleet", "c0"),
                KEY_VALUE, "persistent topic", "non-persistent");
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void maxConsumersPerSubscriptionIsEnforced() throws Exception {
        String namespace = "public/bad-input-max-consumers";
        cluster.admin().namespaces().createNamespace(namespace, Set.of(cluster.clusterName()));
        cluster.admin().namespaces().setMaxConsumersPerSubscription(namespace, 2);
        String topic = "persistent://" + namespace + "/t-" + java.util.UUID.randomUUID().toString().substring(0, 8);
        List<Consumer<String>> fleet = broadcastConsumers(topic, "fleet", 2);
        List<Consumer<String>> stock = new ArrayList<>();
        try (Producer<String> producer = producer(topic)) {
            await().atMost(Duration.ofSeconds(20)).until(() -> Integer.valueOf(2).equals(
                    brokerTopic(topic).getHierarchyTopicPolicies().getMaxConsumersPerSubscription().get()));
            List<String> expected = new ArrayList<>(publish(producer, "before", 5));
            assertRefused(ConsumerBusyException.class, () -> broadcastConsumer(topic, "fleet", "c2"),
                    "max consumers");
            // A stock Failover subscription gets the same answer.
            for (int i = 0; i < 2; i++) {
                stock.add(client.newConsumer(Schema.STRING).topic(topic).subscriptionName("stock")
                        .subscriptionType(SubscriptionType.Failover).consumerName("s" + i).subscribe());
            }
            assertRefused(ConsumerBusyException.class, () -> client.newConsumer(Schema.STRING).topic(topic)
                    .subscriptionName("stock").subscriptionType(SubscriptionType.Failover).consumerName("s2")
                    .subscribe(), "max consumers");

            expected.addAll(publish(producer, "after", 5));
            assertEveryoneReceives(fleet, expected);
            assertEquals(dispatcher(topic, "fleet").getConsumers().size(), 2);

            // A place freed is a place taken: the limit counts connected consumers.
            fleet.remove(1).close();
            await().atMost(Duration.ofSeconds(20)).until(() -> dispatcher(topic, "fleet").getConsumers().size() == 1);
            fleet.add(broadcastConsumer(topic, "fleet", "c2"));
            assertEquals(dispatcher(topic, "fleet").getConsumers().size(), 2);
        } finally {
            closeAll(fleet);
            closeAll(stock);
        }
    }

    // ----- acknowledgements of positions the consumer never got -----

    @Test(groups = "integration", timeOut = 120_000)
    public void individualAckPastTheEndIsRejected() throws Exception {
        ackPastTheEndIsRejected(false);
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void cumulativeAckPastTheEndIsRejected() throws Exception {
        ackPastTheEndIsRejected(true);
    }

    /**
     * A consumer that has everything acknowledged sends an ack for "ledger of the last message, entry + 1000":
     * refused, and neither its virtual cursor nor the subscription's cursor moves past the real end; afterwards
     * both consumers get every new message.
     */
    private void ackPastTheEndIsRejected(boolean cumulative) throws Exception {
        String topic = newTopic(cumulative ? "ack-cumulative-past-end" : "ack-individual-past-end");
        Consumer<String> liar = ackReceiptConsumer(topic, "fleet", "liar");
        Consumer<String> honest = broadcastConsumer(topic, "fleet", "honest");
        try (Producer<String> producer = producer(topic)) {
            List<String> sent = publish(producer, "m", 3);
            List<MessageId> ids = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                Message<String> m = liar.receive(30, TimeUnit.SECONDS);
                assertNotNull(m);
                assertEquals(m.getValue(), sent.get(i));
                ids.add(m.getMessageId());
                liar.acknowledge(m); // succeeds: the receipt says so
            }
            assertEquals(receive(honest, 3), sent);
            MessageIdImpl last = (MessageIdImpl) ids.get(2);
            PositionImpl lastPosition = PositionImpl.get(last.getLedgerId(), last.getEntryId());
            BroadcastDispatcher dispatcher = dispatcher(topic, "fleet");
            BroadcastConsumer liarState = member(topic, "fleet", "liar");
            await().atMost(Duration.ofSeconds(20)).until(() -> markDeleted(topic, "fleet").equals(lastPosition));
            assertEquals(liarState.cursor().acknowledged(), lastPosition);
            assertEquals(dispatcher.counters().rejectedAcks(), 0);

            MessageIdImpl fabricated = new MessageIdImpl(last.getLedgerId(), last.getEntryId() + 1000,
                    last.getPartitionIndex());
            NotAllowedException refused = expectThrows(NotAllowedException.class, () -> {
                if (cumulative) {
                    liar.acknowledgeCumulative(fabricated);
                } else {
                    liar.acknowledge(fabricated);
                }
            });
            assertTrue(refused.getMessage().contains(last.getLedgerId() + ":" + (last.getEntryId() + 1000))
                    && refused.getMessage().contains("never sent"), refused.getMessage());
            assertEquals(dispatcher.counters().rejectedAcks(), 1);
            PositionImpl fake = PositionImpl.get(fabricated.getLedgerId(), fabricated.getEntryId());
            assertEquals(liarState.cursor().acknowledged(), lastPosition, "the liar's virtual cursor moved");
            await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5)).until(() ->
                    markDeleted(topic, "fleet").equals(lastPosition)
                            && liarState.cursor().acknowledged().equals(lastPosition));
            assertTrue(markDeleted(topic, "fleet").compareTo(fake) < 0);

            // Nothing lost. The liar's client now takes everything below the fabricated id for acknowledged and
            // would drop it, so the liar reconnects by name: it resumes right after the last real message (had the
            // ack moved its virtual cursor, it would resume past the new messages and get none of them).
            liar.close();
            await().atMost(Duration.ofSeconds(20)).until(() -> dispatcher.parkedCount() == 1);
            try (Consumer<String> resumed = broadcastConsumer(topic, "fleet", "liar")) {
                assertEquals(member(topic, "fleet", "liar").cursor().acknowledged(), lastPosition);
                List<String> more = publish(producer, "more", 2);
                assertEquals(receive(honest, 2), more);
                assertEquals(receive(resumed, 2), more);
                PositionImpl end = lastConfirmed(topic);
                await().atMost(Duration.ofSeconds(20)).until(() -> markDeleted(topic, "fleet").equals(end));
            }
            assertEquals(dispatcher.counters().rejectedAcks(), 1);
        } finally {
            liar.close();
            honest.close();
        }
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void ackOfAMessageNotYetSentIsRejected() throws Exception {
        String topic = newTopic("ack-not-sent");
        // One message of prefetch: the broker sends the first message and waits for the client to ask for more.
        Consumer<String> consumer = Broadcast.configure(client.newConsumer(Schema.STRING)).topic(topic)
                .subscriptionName("fleet").consumerName("slow").receiverQueueSize(1).isAckReceiptEnabled(true)
                .subscribe();
        try (Producer<String> producer = producer(topic)) {
            List<MessageId> ids = new ArrayList<>();
            List<String> sent = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                ids.add(producer.send("m-" + i));
                sent.add("m-" + i);
            }
            BroadcastConsumer state = member(topic, "fleet", "slow");
            PositionImpl first = position(ids.get(0));
            await().atMost(Duration.ofSeconds(20)).until(() -> state.cursor().highestSent().equals(first));
            PositionImpl start = state.cursor().acknowledged();
            PositionImpl markDeletedBefore = markDeleted(topic, "fleet");

            // Message 3 exists, but was never sent to this consumer.
            NotAllowedException refused = expectThrows(NotAllowedException.class,
                    () -> consumer.acknowledge(ids.get(3)));
            assertTrue(refused.getMessage().contains("never sent"), refused.getMessage());
            assertEquals(dispatcher(topic, "fleet").counters().rejectedAcks(), 1);
            assertEquals(state.cursor().acknowledged(), start);
            assertFalse(state.cursor().isIndividuallyAcknowledged(position(ids.get(3))),
                    "the refused ack was recorded");
            await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5)).until(() ->
                    markDeleted(topic, "fleet").equals(markDeletedBefore));

            // Nothing lost: the consumer still gets all five (message 3 included) and can acknowledge them.
            assertEquals(receive(consumer, 5), sent);
            PositionImpl last = position(ids.get(4));
            await().atMost(Duration.ofSeconds(20)).until(() -> state.cursor().acknowledged().equals(last)
                    && markDeleted(topic, "fleet").equals(last));
            assertEquals(dispatcher(topic, "fleet").counters().rejectedAcks(), 1);
        } finally {
            consumer.close();
        }
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void acksNamingAnotherConnectionsConsumerMoveNothing() throws Exception {
        String topic = newTopic("foreign-ack");
        PulsarClient attackerClient = newClient();
        Consumer<String> attacker = Broadcast.configure(attackerClient.newConsumer(Schema.STRING)).topic(topic)
                .subscriptionName("fleet").consumerName("attacker").subscribe();
        List<Consumer<String>> victims = new ArrayList<>(List.of(broadcastConsumer(topic, "fleet", "victim-1"),
                broadcastConsumer(topic, "fleet", "victim-2")));
        List<Consumer<String>> all = new ArrayList<>(victims);
        all.add(attacker);
        try (Producer<String> producer = producer(topic)) {
            List<String> sent = publish(producer, "m", 5);
            Map<Consumer<String>, List<Message<String>>> received = new java.util.HashMap<>();
            for (Consumer<String> c : all) {
                received.put(c, receiveWithoutAck(c, 5));
            }
            BroadcastDispatcher dispatcher = dispatcher(topic, "fleet");
            List<BroadcastConsumer> states = new ArrayList<>();
            List<PositionImpl> before = new ArrayList<>();
            for (String name : List.of("victim-1", "victim-2", "attacker")) {
                BroadcastConsumer state = member(topic, "fleet", name);
                states.add(state);
                before.add(state.cursor().acknowledged());
            }
            PositionImpl markDeletedBefore = markDeleted(topic, "fleet");

            // The ids the broker knows the victims by (on their own connection), and one nobody has.
            long attackerId = brokerConsumer(topic, "fleet", "attacker").consumerId();
            List<Long> targets = new ArrayList<>();
            for (String name : List.of("victim-1", "victim-2")) {
                long id = brokerConsumer(topic, "fleet", name).consumerId();
                if (id != attackerId) {
                    targets.add(id);
                }
            }
            assertFalse(targets.isEmpty(), "a victim's consumer id differs from the attacker's own");
            targets.add(attackerId + 1_000_000);
            ClientCnx cnx = ((ConsumerImpl<?>) attacker).getClientCnx();
            assertNotNull(cnx);
            for (long target : targets) {
                assertNotEquals(target, attackerId);
                for (MessageId id : List.of(received.get(attacker).get(4).getMessageId(),
                        received.get(attacker).get(0).getMessageId())) {
                    MessageIdImpl m = (MessageIdImpl) id;
                    cnx.ctx().writeAndFlush(Commands.newAck(target, m.getLedgerId(), m.getEntryId(), null,
                            AckType.Cumulative, null, Collections.emptyMap(), -1));
                    cnx.ctx().writeAndFlush(Commands.newAck(target, m.getLedgerId(), m.getEntryId(), null,
                            AckType.Individual, null, Collections.emptyMap(), -1));
                }
            }
            // A round trip on the same connection: the broker has handled the acks before it answers this.
            attacker.getLastMessageId();

            await("no virtual cursor and not the subscription's cursor moved").during(Duration.ofSeconds(1))
                    .atMost(Duration.ofSeconds(10)).until(() -> {
                for (int i = 0; i < states.size(); i++) {
                    if (!states.get(i).cursor().acknowledged().equals(before.get(i))
                            || states.get(i).cursor().individualAckCount() != 0) {
                        return false;
                    }
                }
                return markDeleted(topic, "fleet").equals(markDeletedBefore);
            });
            assertEquals(dispatcher.counters().rejectedAcks(), 0);

            // Nothing lost: everyone gets what comes next, and their own acks still count.
            List<String> more = publish(producer, "more", 3);
            for (Consumer<String> c : all) {
                List<Message<String>> got = received.get(c);
                got.addAll(receiveWithoutAck(c, 3));
                List<String> values = new ArrayList<>();
                for (Message<String> m : got) {
                    values.add(m.getValue());
                    c.acknowledge(m);
                }
                List<String> expected = new ArrayList<>(sent);
                expected.addAll(more);
                assertEquals(values, expected, c.getConsumerName());
            }
            PositionImpl end = lastConfirmed(topic);
            await().atMost(Duration.ofSeconds(20)).until(() -> markDeleted(topic, "fleet").equals(end));
        } finally {
            closeAll(all);
            attackerClient.close();
        }
    }

    // ----- helpers -----

    /** Asserts that {@code attempt} fails with {@code type} and a message naming every one of {@code mustName}. */
    private static <E extends PulsarClientException> E assertRefused(Class<E> type, ThrowingRunnable attempt,
                                                                    String... mustName) {
        E e = expectThrows(type, attempt);
        String message = String.valueOf(e.getMessage());
        for (String s : mustName) {
            assertTrue(message.contains(s), "the error does not name '" + s + "': " + message);
        }
        return e;
    }

    private Consumer<String> ackReceiptConsumer(String topic, String subscription, String name)
            throws PulsarClientException {
        return Broadcast.configure(client.newConsumer(Schema.STRING)).topic(topic).subscriptionName(subscription)
                .consumerName(name).isAckReceiptEnabled(true).subscribe();
    }

    private static List<Message<String>> receiveWithoutAck(Consumer<String> consumer, int n)
            throws PulsarClientException {
        List<Message<String>> messages = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Message<String> m = consumer.receive(30, TimeUnit.SECONDS);
            assertNotNull(m, consumer.getConsumerName() + " got " + i + " of " + n);
            messages.add(m);
        }
        return messages;
    }

    private List<String> subscriptions(String topic) throws Exception {
        return cluster.admin().topics().getSubscriptions(topic);
    }

    private PositionImpl markDeleted(String topic, String subscription) {
        return (PositionImpl) brokerSubscription(topic, subscription).getCursor().getMarkDeletedPosition();
    }

    private org.apache.pulsar.broker.service.Consumer brokerConsumer(String topic, String subscription,
                                                                     String name) {
        return brokerSubscription(topic, subscription).getConsumers().stream()
                .filter(c -> c.consumerName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no consumer " + name + " on " + subscription));
    }

    /** The broker's state of the broadcast consumer named {@code name}. */
    private BroadcastConsumer member(String topic, String subscription, String name) {
        BroadcastConsumer state = dispatcher(topic, subscription).member(brokerConsumer(topic, subscription, name));
        assertNotNull(state, name + " is not a member");
        return state;
    }

    private PositionImpl lastConfirmed(String topic) {
        return (PositionImpl) brokerTopic(topic).getManagedLedger().getLastConfirmedEntry();
    }

    private static PositionImpl position(MessageId id) {
        MessageIdImpl m = (MessageIdImpl) id;
        return PositionImpl.get(m.getLedgerId(), m.getEntryId());
    }
}
