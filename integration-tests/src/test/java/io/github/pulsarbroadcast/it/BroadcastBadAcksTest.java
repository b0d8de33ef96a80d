package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertNotEquals;
import static org.testng.Assert.assertNotNull;
import static org.testng.Assert.assertTrue;
import static org.testng.Assert.expectThrows;

import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastConsumer;
import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastDispatcher;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.PulsarClientException.NotAllowedException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.impl.ClientCnx;
import org.apache.pulsar.client.impl.ConsumerImpl;
import org.apache.pulsar.client.impl.MessageIdImpl;
import org.apache.pulsar.common.api.proto.CommandAck.AckType;
import org.apache.pulsar.common.protocol.Commands;
import org.testng.annotations.Test;

/**
 * Bad acknowledgements from clients: an acknowledgement of a position the consumer was never sent (past the end of
 * the topic, not sent yet) or naming a consumer of another connection is rejected and moves nothing: the consumers
 * already on the subscription still get every message, and the subscription's cursor never moves past what they
 * have acknowledged. (Split out of {@link BroadcastBadInputTest}, which covers who may join which subscription.)
 *
 * <p>Threading: TestNG's test thread only.
 */
public class BroadcastBadAcksTest extends BroadcastTestBase {

    @Override
    protected void configureBroker(ServiceConfiguration conf) {
        // Sync the subscription's cursor often, so "it did not move" is observed over several syncs.
        conf.getProperties().setProperty("broadcastMarkDeleteIntervalMs", "100");
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
                received.put(c, take(c, 5));
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
                got.addAll(take(c, 3));
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

    /**
     * Acknowledgements inside a transaction (a client with transactions enabled sends them with a transaction id) are
     * not supported on a broadcast subscription (usage.md, "Not available"): refused, they move nothing, and the
     * messages stay unacknowledged (a redelivery brings them again; acknowledged plainly, they count).
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void transactionalAcksMoveNothing() throws Exception {
        String topic = newTopic("transactional-ack");
        Consumer<String> consumer = broadcastConsumer(topic, "fleet", "tx");
        try (Producer<String> producer = producer(topic)) {
            List<String> sent = publish(producer, "m", 3);
            List<Message<String>> got = take(consumer, 3);
            BroadcastConsumer state = member(topic, "fleet", "tx");
            PositionImpl before = state.cursor().acknowledged();
            PositionImpl markDeletedBefore = markDeleted(topic, "fleet");
            long consumerId = brokerConsumer(topic, "fleet", "tx").consumerId();
            ClientCnx cnx = ((ConsumerImpl<?>) consumer).getClientCnx();
            for (Message<String> m : got) {
                MessageIdImpl id = (MessageIdImpl) m.getMessageId();
                for (AckType type : AckType.values()) {
                    cnx.ctx().writeAndFlush(Commands.newAck(consumerId, id.getLedgerId(), id.getEntryId(), null,
                            type, null, Collections.emptyMap(), 7, 1, -1));
                }
            }
            consumer.getLastMessageId(); // a round trip: the broker has handled the acks before it answers
            await("nothing moved").during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(10)).until(() ->
                    state.cursor().acknowledged().equals(before) && state.cursor().individualAckCount() == 0
                            && markDeleted(topic, "fleet").equals(markDeletedBefore));

            consumer.redeliverUnacknowledgedMessages();
            assertEquals(receive(consumer, 3), sent, "the messages came again: they were not acknowledged");
            PositionImpl end = lastConfirmed(topic);
            await().atMost(Duration.ofSeconds(20)).until(() -> markDeleted(topic, "fleet").equals(end));
        } finally {
            consumer.close();
        }
    }

    /**
     * Regression (forty-sixth session, a review of the connection code): an ack that reached stock's path (a consumer
     * id the connection's routing lost when two attaches of one id overlapped) was applied to the subscription's
     * shared cursor, which moved past what the other consumers had not received. Called here as stock calls it.
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void aStockAcknowledgementOfTheSubscriptionMovesNothing() throws Exception {
        String topic = newTopic("stock-ack");
        Consumer<String> fast = broadcastConsumer(topic, "fleet", "fast");
        Consumer<String> slow = broadcastConsumer(topic, "fleet", "slow");
        try (Producer<String> producer = producer(topic)) {
            List<String> sent = publish(producer, "m", 3);
            takeAndAck(fast, 3, 3);
            PositionImpl markDeletedBefore = markDeleted(topic, "fleet");
            brokerSubscription(topic, "fleet").acknowledgeMessage(List.of(lastConfirmed(topic)), AckType.Cumulative,
                    Collections.emptyMap());
            await("the mark-delete stays before what 'slow' has not acknowledged").during(Duration.ofSeconds(1))
                    .atMost(Duration.ofSeconds(10)).until(() -> markDeleted(topic, "fleet").equals(markDeletedBefore));
            assertEquals(receive(slow, 3), sent);
        } finally {
            closeAll(List.of(fast, slow));
        }
    }

    private Consumer<String> ackReceiptConsumer(String topic, String subscription, String name)
            throws PulsarClientException {
        return Broadcast.configure(client.newConsumer(Schema.STRING)).topic(topic).subscriptionName(subscription)
                .consumerName(name).isAckReceiptEnabled(true).subscribe();
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
