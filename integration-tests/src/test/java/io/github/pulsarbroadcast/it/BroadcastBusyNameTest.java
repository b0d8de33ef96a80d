package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;
import static org.testng.Assert.assertNotNull;

import io.github.pulsarbroadcast.broadcast.BroadcastMode;
import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import io.github.pulsarbroadcast.broadcast.cnx.BroadcastServerCnx;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.impl.ClientCnx;
import org.apache.pulsar.client.impl.ConsumerImpl;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.apache.pulsar.common.api.proto.CommandSubscribe.SubType;
import org.apache.pulsar.common.protocol.Commands;
import org.testng.annotations.Test;

/**
 * A subscribe whose consumer name is held by a connected consumer, through the real broker
 * ({@code broadcastBusyNameWaitMs}, design.md "Consumer identity"). A live holder on another connection keeps its name
 * ({@code BroadcastBadInputTest.consumerNamesAreUniqueWithinASubscription}); these are the two cases where the holder
 * is not really there:
 * <ul>
 *   <li>its client stopped (a paused process, a vehicle in a tunnel: TCP still up, nothing answered; the test blocks
 *       the client's event-loop thread):
 *       the broker pings it, closes it as dead after the wait, and the new subscribe takes the name and its position
 *       (before: refused until the broker's keep-alive noticed, 30 to 60 s later);</li>
 *   <li>the second subscribe comes over the holder's own connection, and the holder closes meanwhile: the stock
 *       Java client does this when a consumer is closed while its re-subscribe is in flight (the close completes on
 *       the client at once, the re-subscribe then succeeds on the broker), and the next subscribe under that name was
 *       refused; {@code BroadcastRandomScheduleTest} failed so once in CI (a {@code ConsumerBusyException} for
 *       car-c). The test writes the second subscribe itself on the holder's connection, so the order is certain.</li>
 * </ul>
 * Both failed before the wait existed (the subscribe refused at once). A third case: two subscribes wait for one
 * name and the first one's client goes away meanwhile; the live one gets the name.
 *
 * <p>Threading: TestNG's test thread; the clients' own threads.
 */
public class BroadcastBusyNameTest extends BroadcastTestBase {

    private static final long WAIT_MS = 1_500;

    @Override
    protected void configureBroker(ServiceConfiguration conf) {
        conf.getProperties().setProperty("broadcastBusyNameWaitMs", Long.toString(WAIT_MS));
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void aNameHeldByAConnectionThatStoppedAnsweringIsTakenWithItsPosition() throws Exception {
        String topic = newTopic("tunnel");
        PulsarClient silentClient = closeAfterTest(newClient());
        PulsarClient otherClient = closeAfterTest(newClient());
        Consumer<String> inTunnel = closeAfterTest(Broadcast.configure(silentClient.newConsumer(Schema.STRING))
                .topic(topic).subscriptionName("fleet").consumerName("car-a").subscribe());
        Producer<String> producer = closeAfterTest(producer(topic));
        List<String> expected = new ArrayList<>(publish(producer, "before", 5));
        assertEquals(values(take(inTunnel, 5)), expected, "received, never acknowledged");

        pause(inTunnel);
        expected.addAll(publish(producer, "meanwhile", 5));

        try (LogLines dead = LogLines.watch("io.github.pulsarbroadcast", "Closing the connection as dead: no answer"
                + " to a ping within ");
             LogLines handedOver = LogLines.watch("io.github.pulsarbroadcast", "Consumer name 'car-a' was held by a"
                     + " connection that closed or did not answer a ping")) {
            Consumer<String> back = closeAfterTest(Broadcast.configure(otherClient.newConsumer(Schema.STRING))
                    .topic(topic).subscriptionName("fleet").consumerName("car-a").subscribe());
            assertEquals(receive(back, 10), expected, "resumed at the position the silent consumer held");
            // What operations.md ("A consumer name that is already connected") tells operators to look for.
            assertTrue(dead.lines().size() == 1
                    && dead.lines().get(0).endsWith(" ms (a subscribe asked for a consumer name it holds)"),
                    "the WARN on the dead connection: " + dead.lines());
            assertTrue(handedOver.lines().size() == 1 && handedOver.lines().get(0).startsWith("[" + topic + "][fleet]"),
                    "the INFO on the name taken over: " + handedOver.lines());
        }
        assertEquals(dispatcher(topic, "fleet").getConsumers().size(), 1, "the silent connection's consumer is gone");
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void aSubscribeOnTheHoldersOwnConnectionWaitsForTheHolderToClose() throws Exception {
        String topic = newTopic("same-connection");
        PulsarClient ownClient = closeAfterTest(newClient());
        Consumer<String> holder = Broadcast.configure(ownClient.newConsumer(Schema.STRING)).topic(topic)
                .subscriptionName("fleet").consumerName("car-c").subscribe();
        ClientCnx cnx = ((ConsumerImpl<?>) holder).getClientCnx();
        assertNotNull(cnx);
        long secondId = 1_000_000;
        cnx.ctx().writeAndFlush(Commands.newSubscribe(topic, "fleet", secondId, 1_000_000, SubType.Failover, 0,
                "car-c", true, null, Map.of(BroadcastMode.KEY, BroadcastMode.BROADCAST), false, false,
                InitialPosition.Latest, 0, null, true, null, Map.of(), 0));
        BroadcastServerCnx brokerSide = (BroadcastServerCnx) brokerSubscription(topic, "fleet").getConsumers()
                .get(0).cnx();
        await("the second subscribe waits in the subscription for the name").atMost(Duration.ofSeconds(10))
                .until(() -> {
                    CompletableFuture<?> second = brokerSide.getConsumers().get(secondId);
                    return second != null && !second.isDone() && brokerSide.pendingJoinCount() == 0;
                });
        holder.close();

        await("the waiting subscribe attached").atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            List<org.apache.pulsar.broker.service.Consumer> consumers = brokerSubscription(topic, "fleet")
                    .getConsumers();
            assertEquals(consumers.size(), 1);
            assertEquals(consumers.get(0).consumerName(), "car-c");
            assertEquals(consumers.get(0).consumerId(), secondId);
        });
    }

    /**
     * A paused process: the consumer's client blocks its only event-loop thread, so nothing is read or written (its
     * TCP connection stays up; the kernel still acknowledges what the broker sends), until the test ends.
     */
    private void pause(Consumer<String> consumer) {
        ClientCnx cnx = ((ConsumerImpl<?>) consumer).getClientCnx();
        assertNotNull(cnx);
        CountDownLatch thaw = new CountDownLatch(1);
        closeAfterTest(thaw::countDown);
        AtomicBoolean paused = new AtomicBoolean();
        cnx.ctx().executor().execute(() -> {
            paused.set(true);
            try {
                thaw.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        await().atMost(Duration.ofSeconds(10)).untilTrue(paused);
    }

    /**
     * Two subscribes wait for a dead holder's name; the first one's client goes away while it waits. When the name is
     * released the first must not take it (its connection is closed: stock code would only remove it again), and the
     * live second one must get it. Before, the first attached and the second was refused with ConsumerBusy, final
     * for the Java client (found by review).
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void aWaiterWhoseClientWentAwayLeavesTheNameToTheLiveOne() throws Exception {
        String topic = newTopic("two-waiters");
        PulsarClient silentClient = closeAfterTest(newClient());
        PulsarClient goneClient = closeAfterTest(newClient());
        PulsarClient liveClient = closeAfterTest(newClient());
        Consumer<String> inTunnel = closeAfterTest(Broadcast.configure(silentClient.newConsumer(Schema.STRING))
                .topic(topic).subscriptionName("fleet").consumerName("car-a").subscribe());
        Producer<String> producer = closeAfterTest(producer(topic));
        pause(inTunnel);

        Broadcast.configure(goneClient.newConsumer(Schema.STRING)).topic(topic).subscriptionName("fleet")
                .consumerName("car-a").subscribeAsync();
        await("the first subscribe waits for the name").atMost(Duration.ofSeconds(10))
                .until(() -> dispatcher(topic, "fleet").subscribesWaitingForName("car-a") == 1);
        goneClient.closeAsync(); // its connection closes at once; the client's threads stop later

        CompletableFuture<Consumer<String>> live = Broadcast.configure(liveClient.newConsumer(Schema.STRING))
                .topic(topic).subscriptionName("fleet").consumerName("car-a").subscribeAsync();
        await("both subscribes wait for the name").atMost(Duration.ofSeconds(10))
                .until(() -> dispatcher(topic, "fleet").subscribesWaitingForName("car-a") == 2);
        List<String> sent = publish(producer, "after", 3);
        assertEquals(receive(closeAfterTest(live.get(30, java.util.concurrent.TimeUnit.SECONDS)), 3), sent);
        assertEquals(dispatcher(topic, "fleet").getConsumers().size(), 1);
    }
}
