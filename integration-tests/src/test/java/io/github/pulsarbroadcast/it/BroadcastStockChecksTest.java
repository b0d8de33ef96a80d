package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertTrue;
import static org.testng.Assert.expectThrows;

import io.github.pulsarbroadcast.broadcast.BroadcastMode;
import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.apache.pulsar.client.admin.PulsarAdminException;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionType;
import org.apache.pulsar.common.api.proto.BaseCommand;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.apache.pulsar.common.api.proto.CommandSubscribe.SubType;
import org.apache.pulsar.common.api.proto.ServerError;
import org.apache.pulsar.common.policies.data.AutoSubscriptionCreationOverride;
import org.apache.pulsar.common.protocol.Commands;
import org.testng.annotations.Test;

/**
 * A broadcast subscribe creates its subscription before the stock subscribe path runs (so that the stock path finds
 * it); these are the checks stock makes before it creates anything, made before the plugin creates anything, and
 * answered as stock answers them. Each test failed before the twenty-sixth session's fix (a review found them): the
 * subscription was created, and stock refused the consumer only afterwards.
 *
 * <p>Threading: TestNG's test thread only.
 */
public class BroadcastStockChecksTest extends BroadcastTestBase {

    /** A SUBSCRIBE before CONNECT: stock closes the connection and creates nothing; so does the plugin. */
    @Test(groups = "integration", timeOut = 120_000)
    public void aSubscribeBeforeConnectCreatesNothingAndClosesTheConnection() throws Exception {
        String topic = newTopic("before-connect");
        cluster.admin().topics().createNonPartitionedTopic(topic);
        try (RawProtocolConnection c = RawProtocolConnection.open(cluster.serviceUrl())) {
            c.send(Commands.newSubscribe(topic, "fleet", 1, 1, SubType.Failover, 0, "intruder", true, null,
                    Map.of(BroadcastMode.KEY, BroadcastMode.BROADCAST), false, false, InitialPosition.Earliest, 0,
                    null, true, null, Map.of(BroadcastMode.KEY, BroadcastMode.BROADCAST), 0));
            assertTrue(c.closedWithoutAnswer(), "the broker closes the connection without an answer");
        }
        assertEquals(cluster.admin().topics().getSubscriptions(topic), List.of(), "no subscription created");
    }

    /** The names of stock's deduplication and replication cursors are refused, as stock refuses them. */
    @Test(groups = "integration", timeOut = 120_000)
    public void reservedSubscriptionNamesAreRefusedBeforeAnythingIsCreated() throws Exception {
        String topic = newTopic("reserved");
        for (String name : List.of("pulsar.dedup", "pulsar.repl.fleet")) {
            PulsarClientException broadcast = expectThrows(PulsarClientException.class, () ->
                    Broadcast.configure(client.newConsumer(Schema.STRING)).topic(topic).subscriptionName(name)
                            .consumerName("c").subscribe());
            PulsarClientException stock = expectThrows(PulsarClientException.class, () ->
                    client.newConsumer(Schema.STRING).topic(topic).subscriptionName(name)
                            .subscriptionType(SubscriptionType.Failover).consumerName("c").subscribe());
            assertTrue(String.valueOf(broadcast.getMessage()).contains("reserved subscription name"),
                    broadcast.getMessage());
            assertEquals(broadcast.getClass(), stock.getClass(), name);
            assertEquals(broadcast.getClass(), PulsarClientException.ProducerBusyException.class, "usage.md: " + name);
            assertFalse(cluster.admin().topics().getSubscriptions(topic).contains(name), name + " was created");
        }
    }

    /**
     * Consumer metadata over {@code maxConsumerMetadataSize} (1 KB by default): stock's MetadataError, nothing created,
     * neither the subscription of a topic that exists nor a topic that does not (stock checks the metadata before it
     * looks the topic up). Failed before the fortieth session's fixes (two reviews found them): the broadcast
     * subscription was created, then (the first fix) the topic.
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void consumerMetadataOverTheLimitIsRefusedBeforeAnythingIsCreated() throws Exception {
        String topic = newTopic("metadata");
        cluster.admin().topics().createNonPartitionedTopic(topic);
        assertMetadataOverTheLimitIsRefused(topic);
        assertEquals(cluster.admin().topics().getSubscriptions(topic), List.of(), "no subscription created");
        String missing = newTopic("metadata-missing");
        assertMetadataOverTheLimitIsRefused(missing);
        assertFalse(cluster.admin().topics().getList("public/default").contains(missing), "topic created");
    }

    /**
     * With {@code allowAutoSubscriptionCreation} off, a first join to a missing subscription of an empty topic is
     * refused as stock refuses it, before the schema it carries is looked at: the topic gets no schema. Failed with the
     * first fix of the fortieth session (found by a second review): the STRING schema was added to the topic.
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void aMissingSubscriptionIsRefusedBeforeItsSchemaIsAddedToTheTopic() throws Exception {
        String namespace = "public/stock-checks-no-sub";
        cluster.admin().namespaces().createNamespace(namespace, Set.of(cluster.clusterName()));
        cluster.admin().namespaces().setAutoSubscriptionCreation(namespace,
                AutoSubscriptionCreationOverride.builder().allowAutoSubscriptionCreation(false).build());
        String topic = "persistent://" + namespace + "/t-" + UUID.randomUUID().toString().substring(0, 8);
        cluster.admin().topics().createNonPartitionedTopic(topic);
        await().atMost(Duration.ofSeconds(20))
                .until(() -> !cluster.broker().getBrokerService().isAllowAutoSubscriptionCreation(topic));
        Map<String, String> broadcast = Map.of(BroadcastMode.KEY, BroadcastMode.BROADCAST);
        try (RawProtocolConnection c = RawProtocolConnection.connected(cluster.serviceUrl())) {
            c.send(Commands.newSubscribe(topic, "fleet", 1, 1, SubType.Failover, 0, "car", true, null, broadcast,
                    false, false, InitialPosition.Earliest, 0, Schema.STRING.getSchemaInfo(), true, null, broadcast,
                    0));
            assertEquals(c.next().getType(), BaseCommand.Type.ERROR);
        }
        expectThrows(PulsarAdminException.NotFoundException.class,
                () -> cluster.admin().schemas().getSchemaInfo(topic));
        assertEquals(cluster.admin().topics().getSubscriptions(topic), List.of(), "no subscription created");
    }

    /**
     * A consumer property given twice: stock's subscribe cannot read the command (it throws), so the plugin refuses it,
     * naming the key, before anything is created. Regression (forty-third session, found by a review): the broadcast
     * subscription was created, stock's exception was only logged, and the client never got an answer.
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void aConsumerPropertyGivenTwiceIsRefusedNamingItBeforeAnythingIsCreated() throws Exception {
        String topic = newTopic("twice");
        cluster.admin().topics().createNonPartitionedTopic(topic);
        BaseCommand cmd = subscribeCommand(topic, "fleet");
        cmd.getSubscribe().addMetadata().setKey(BroadcastMode.KEY).setValue(BroadcastMode.BROADCAST);
        cmd.getSubscribe().addMetadata().setKey("zone").setValue("1");
        cmd.getSubscribe().addMetadata().setKey("zone").setValue("2");
        try (RawProtocolConnection c = RawProtocolConnection.connected(cluster.serviceUrl())) {
            c.send(Commands.serializeWithSize(cmd));
            BaseCommand answer = c.next();
            assertEquals(answer.getType(), BaseCommand.Type.ERROR);
            assertEquals(answer.getError().getError(), ServerError.NotAllowedError);
            String message = answer.getError().getMessage();
            assertTrue(message.contains("'zone' is given twice"), message);
        }
        assertEquals(cluster.admin().topics().getSubscriptions(topic), List.of(), "no subscription created");
    }

    /**
     * A stock subscribe (no broadcast key) that stock's subscribe cannot read (a consumer property given twice), to a
     * topic not loaded here, which the plugin holds while it checks the stored subscription: stock's answer, the
     * connection closed, as without the plugin. Regression (forty-third session, a review): the exception stock's
     * subscribe threw in the held continuation reached only the pipeline's tail, and the client got no answer.
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void anUnreadableStockSubscribeHeldForATopicLoadClosesTheConnectionAsStockDoes() throws Exception {
        String topic = newTopic("unreadable-stock");
        cluster.admin().topics().createNonPartitionedTopic(topic);
        cluster.admin().topics().unload(topic);
        BaseCommand cmd = subscribeCommand(topic, "stock");
        cmd.getSubscribe().addMetadata().setKey("zone").setValue("1");
        cmd.getSubscribe().addMetadata().setKey("zone").setValue("2");
        try (RawProtocolConnection c = RawProtocolConnection.connected(cluster.serviceUrl())) {
            c.send(Commands.serializeWithSize(cmd));
            assertTrue(c.closedWithoutAnswer(), "the connection is closed, as stock closes it");
        }
    }

    /**
     * A subscription property given twice: the first counts, as stock reads them (its SubscriptionOption), also for
     * what is stored with a broadcast subscription the plugin creates. Before the forty-third session the plugin kept
     * the last one.
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void aSubscriptionPropertyGivenTwiceIsStoredWithItsFirstValue() throws Exception {
        String topic = newTopic("first-wins");
        cluster.admin().topics().createNonPartitionedTopic(topic);
        BaseCommand cmd = subscribeCommand(topic, "fleet");
        cmd.getSubscribe().addSubscriptionProperty().setKey(BroadcastMode.KEY).setValue(BroadcastMode.BROADCAST);
        cmd.getSubscribe().addSubscriptionProperty().setKey("area").setValue("42");
        cmd.getSubscribe().addSubscriptionProperty().setKey("area").setValue("7");
        try (RawProtocolConnection c = RawProtocolConnection.connected(cluster.serviceUrl())) {
            c.send(Commands.serializeWithSize(cmd));
            assertEquals(c.next().getType(), BaseCommand.Type.SUCCESS);
            assertEquals(brokerSubscription(topic, "fleet").getSubscriptionProperties().get("area"), "42");
        }
    }

    /** A SUBSCRIBE of consumer "car" (id 1, request 1), Failover, without properties. */
    private static BaseCommand subscribeCommand(String topic, String subscription) {
        BaseCommand cmd = new BaseCommand().setType(BaseCommand.Type.SUBSCRIBE);
        cmd.setSubscribe().setTopic(topic).setSubscription(subscription).setSubType(SubType.Failover)
                .setConsumerId(1).setRequestId(1).setConsumerName("car");
        return cmd;
    }

    /**
     * The broadcast key misspelt by case: refused, naming the key to write, and nothing is created. Regression
     * (forty-third session, a review): it went to stock, which made a stock Failover subscription that gave this one
     * consumer everything and refused every broadcast client after it.
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void theKeyMisspeltByCaseIsRefusedNamingTheKeyToWrite() throws Exception {
        String topic = newTopic("misspelt");
        cluster.admin().topics().createNonPartitionedTopic(topic);
        PulsarClientException refused = expectThrows(PulsarClientException.NotAllowedException.class,
                () -> client.newConsumer(Schema.STRING).topic(topic).subscriptionName("fleet")
                        .subscriptionType(SubscriptionType.Failover)
                        .subscriptionProperties(Map.of("Pulsar.Subscription.Mode", "broadcast")).subscribe());
        assertTrue(refused.getMessage().contains("'Pulsar.Subscription.Mode' is not " + BroadcastMode.KEY),
                refused.getMessage());
        assertEquals(cluster.admin().topics().getSubscriptions(topic), List.of(), "no subscription created");
    }

    private void assertMetadataOverTheLimitIsRefused(String topic) throws Exception {
        Map<String, String> broadcast = Map.of(BroadcastMode.KEY, BroadcastMode.BROADCAST, "big", "x".repeat(2000));
        try (RawProtocolConnection c = RawProtocolConnection.connected(cluster.serviceUrl())) {
            c.send(Commands.newSubscribe(topic, "fleet", 1, 1, SubType.Failover, 0, "car", true, null, broadcast,
                    false, false, InitialPosition.Earliest, 0, null, true, null, broadcast, 0));
            BaseCommand refusedBroadcast = c.next();
            c.send(Commands.newSubscribe(topic, "stock", 2, 2, SubType.Failover, 0, "car", true, null,
                    Map.of("big", "x".repeat(2000)), false, false, InitialPosition.Earliest, 0, null, true, null,
                    Map.of(), 0));
            BaseCommand refusedStock = c.next();
            assertEquals(refusedBroadcast.getType(), BaseCommand.Type.ERROR);
            assertEquals(refusedBroadcast.getError().getError(), ServerError.MetadataError);
            assertEquals(refusedStock.getError().getError(), ServerError.MetadataError, "the stock control");
        }
    }

    /**
     * A schema the topic does not accept (a STRING consumer on an INT64 topic): stock's exception, nothing created.
     * Failed before the fortieth session's fix (a review found it): the broadcast subscription was created.
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void anIncompatibleSchemaIsRefusedBeforeAnythingIsCreated() throws Exception {
        String topic = newTopic("schema");
        try (var producer = client.newProducer(Schema.INT64).topic(topic).create()) {
            producer.send(1L);
            PulsarClientException broadcast = expectThrows(PulsarClientException.class, () ->
                    Broadcast.configure(client.newConsumer(Schema.STRING)).topic(topic).subscriptionName("fleet")
                            .consumerName("c").subscribe());
            PulsarClientException stock = expectThrows(PulsarClientException.class, () ->
                    client.newConsumer(Schema.STRING).topic(topic).subscriptionName("stock")
                            .subscriptionType(SubscriptionType.Failover).consumerName("c").subscribe());
            assertEquals(broadcast.getClass(), stock.getClass(), String.valueOf(broadcast.getMessage()));
            assertEquals(cluster.admin().topics().getSubscriptions(topic), List.of(), "no subscription created");
        }
    }

    /** A namespace whose subscription types leave out Failover gets no broadcast subscription either. */
    @Test(groups = "integration", timeOut = 120_000)
    public void aSubscriptionTypesPolicyWithoutFailoverIsRespected() throws Exception {
        String namespace = "public/stock-checks-types";
        cluster.admin().namespaces().createNamespace(namespace, Set.of(cluster.clusterName()));
        cluster.admin().namespaces().setSubscriptionTypesEnabled(namespace, Set.of(SubscriptionType.Exclusive));
        String topic = "persistent://" + namespace + "/t-" + UUID.randomUUID().toString().substring(0, 8);
        cluster.admin().topics().createNonPartitionedTopic(topic);
        try (var producer = producer(topic)) {
            await().atMost(Duration.ofSeconds(20)).until(() -> Set.of(SubscriptionType.Exclusive.name()).equals(
                    Set.of(brokerTopic(topic).getHierarchyTopicPolicies().getSubscriptionTypesEnabled().get()
                            .stream().map(Enum::name).toArray())));
            PulsarClientException refused = expectThrows(PulsarClientException.class, () ->
                    Broadcast.configure(client.newConsumer(Schema.STRING)).topic(topic).subscriptionName("fleet")
                            .consumerName("c").subscribe());
            assertTrue(String.valueOf(refused.getMessage()).contains("Failover"), refused.getMessage());
            assertEquals(refused.getClass(), PulsarClientException.NotAllowedException.class, "usage.md");
            assertEquals(cluster.admin().topics().getSubscriptions(topic), List.of(), "no subscription created");
        }
    }
}
