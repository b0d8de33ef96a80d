package io.github.pulsarbroadcast.broadcast;

import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertNull;
import static org.testng.Assert.assertTrue;

import org.apache.pulsar.common.api.proto.CommandSubscribe;
import org.apache.pulsar.common.api.proto.CommandSubscribe.SubType;
import org.apache.pulsar.common.api.proto.Schema;
import org.testng.annotations.Test;

/** How one subscribe command is read, and the messages a client gets for bad input. */
public class BroadcastModeTest {

    private static CommandSubscribe subscribe(SubType type) {
        return new CommandSubscribe().setTopic("persistent://t/n/x").setSubscription("s").setSubType(type)
                .setConsumerId(1).setRequestId(1);
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void noKeyMeansStock() {
        CommandSubscribe stock = subscribe(SubType.Shared);
        assertFalse(BroadcastMode.requested(stock));
        assertNull(BroadcastMode.explain(stock, true));
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void subscriptionPropertyOrConsumerPropertySelectsBroadcast() {
        CommandSubscribe bySubscription = subscribe(SubType.Failover);
        bySubscription.addSubscriptionProperty().setKey(BroadcastMode.KEY).setValue("broadcast");
        assertTrue(BroadcastMode.requested(bySubscription));
        assertNull(BroadcastMode.explain(bySubscription, true));
        CommandSubscribe byConsumer = subscribe(SubType.Failover);
        byConsumer.addMetadata().setKey(BroadcastMode.KEY).setValue("broadcast");
        assertTrue(BroadcastMode.requested(byConsumer));
        assertNull(BroadcastMode.explain(byConsumer, true));
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void otherSubscriptionTypesAreRefusedNamingFailover() {
        for (SubType type : new SubType[] {SubType.Shared, SubType.Key_Shared, SubType.Exclusive}) {
            CommandSubscribe cmd = subscribe(type);
            cmd.addMetadata().setKey(BroadcastMode.KEY).setValue("broadcast");
            assertTrue(BroadcastMode.requested(cmd));
            String why = BroadcastMode.explain(cmd, true);
            assertTrue(why.contains("Failover") && why.contains(type.name()), why);
        }
    }

    /** Regression (issue 10, case 8): subscribe fields that would move every consumer are refused, named. */
    @Test(groups = "unit", timeOut = 10_000)
    public void rollbackDurationAndReplicatedStateAreRefusedNamingTheField() {
        CommandSubscribe rollback = subscribe(SubType.Failover);
        rollback.addSubscriptionProperty().setKey(BroadcastMode.KEY).setValue("broadcast");
        rollback.setStartMessageRollbackDurationSec(60);
        String problem = BroadcastMode.explain(rollback, true);
        assertTrue(problem != null && problem.contains("startMessageRollbackDurationSec"), String.valueOf(problem));
        CommandSubscribe replicated = subscribe(SubType.Failover);
        replicated.addSubscriptionProperty().setKey(BroadcastMode.KEY).setValue("broadcast");
        replicated.setReplicateSubscriptionState(true);
        problem = BroadcastMode.explain(replicated, true);
        assertTrue(problem != null && problem.contains("replicateSubscriptionState"), String.valueOf(problem));
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void unknownValueIsRefusedNamingTheKeyAndTheAllowedValue() {
        CommandSubscribe cmd = subscribe(SubType.Failover);
        cmd.addSubscriptionProperty().setKey(BroadcastMode.KEY).setValue("multicast");
        String why = BroadcastMode.explain(cmd, true);
        assertTrue(why.contains(BroadcastMode.KEY + "=multicast") && why.contains("'broadcast'"), why);
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void nonPersistentTopicsAndReadersAreRefused() {
        CommandSubscribe cmd = subscribe(SubType.Failover);
        cmd.addMetadata().setKey(BroadcastMode.KEY).setValue("broadcast");
        assertTrue(BroadcastMode.explain(cmd, false).contains("non-persistent"));
        cmd.setDurable(false);
        assertTrue(BroadcastMode.explain(cmd, true).contains("durable"));
    }

    /**
     * A key that is the broadcast key but for case or blanks is refused, naming it and the key to write: served as
     * stock Failover it gave one consumer everything and made the subscription one that broadcast clients cannot join.
     * Regression (forty-third session, a review): such a subscribe was not "requested" and went to stock silently.
     */
    @Test(groups = "unit", timeOut = 10_000)
    public void aKeyMisspeltByCaseOrBlanksIsRefusedNamingTheKeyToWrite() {
        String[] misspelt = {"Pulsar.Subscription.Mode", " pulsar.subscription.mode", "PULSAR.SUBSCRIPTION.MODE "};
        for (String key : misspelt) {
            CommandSubscribe bySubscription = subscribe(SubType.Failover);
            bySubscription.addSubscriptionProperty().setKey(key).setValue("broadcast");
            CommandSubscribe byConsumer = subscribe(SubType.Shared);
            byConsumer.addMetadata().setKey(key).setValue(" Broadcast");
            for (CommandSubscribe cmd : new CommandSubscribe[] {bySubscription, byConsumer}) {
                assertTrue(BroadcastMode.requested(cmd), key);
                String why = BroadcastMode.explain(cmd, true);
                assertTrue(why != null && why.contains("'" + key + "'") && why.contains(BroadcastMode.KEY), why);
            }
        }
        CommandSubscribe other = subscribe(SubType.Failover);
        other.addMetadata().setKey("pulsar.subscription.modes").setValue("x");
        other.addSubscriptionProperty().setKey("mode").setValue("broadcast");
        other.addSubscriptionProperty().setKey("Pulsar.Subscription.Mode").setValue("exclusive");
        assertFalse(BroadcastMode.requested(other), "other keys, and the mistyped key with another value, stay stock");
    }

    /**
     * A consumer or schema property given twice is refused, named: stock's subscribe cannot read such a command (it
     * throws after the plugin had created the subscription, and the client got no answer). Regression (forty-third
     * session, a review).
     */
    @Test(groups = "unit", timeOut = 10_000)
    public void aPropertyGivenTwiceIsRefusedNamingIt() {
        CommandSubscribe metadata = subscribe(SubType.Failover);
        metadata.addMetadata().setKey(BroadcastMode.KEY).setValue("broadcast");
        metadata.addMetadata().setKey("zone").setValue("1");
        metadata.addMetadata().setKey("zone").setValue("2");
        String why = BroadcastMode.explain(metadata, true);
        assertTrue(why != null && why.contains("Consumer property 'zone' is given twice"), why);
        CommandSubscribe schema = subscribe(SubType.Failover);
        schema.addSubscriptionProperty().setKey(BroadcastMode.KEY).setValue("broadcast");
        schema.setSchema().setName("s").setSchemaData(new byte[0]).setType(Schema.Type.String);
        schema.getSchema().addProperty().setKey("k").setValue("1");
        schema.getSchema().addProperty().setKey("k").setValue("1");
        why = BroadcastMode.explain(schema, true);
        assertTrue(why != null && why.contains("Schema property 'k' is given twice"), why);
        CommandSubscribe subscriptionProperties = subscribe(SubType.Failover);
        subscriptionProperties.addSubscriptionProperty().setKey(BroadcastMode.KEY).setValue("broadcast");
        subscriptionProperties.addSubscriptionProperty().setKey("p").setValue("1");
        subscriptionProperties.addSubscriptionProperty().setKey("p").setValue("2");
        assertNull(BroadcastMode.explain(subscriptionProperties, true), "stock reads these (the first one counts)");
    }

    /**
     * The check for keys given twice is linear: it runs on the event loop before authorization, and schema properties
     * are bounded only by the frame size. Regression (forty-third session's review): a nested loop took minutes on
     * 200,000 keys (this test's time-out).
     */
    @Test(groups = "unit", timeOut = 10_000)
    public void manyDistinctPropertiesAreCheckedInLinearTime() {
        CommandSubscribe cmd = subscribe(SubType.Failover);
        cmd.addSubscriptionProperty().setKey(BroadcastMode.KEY).setValue("broadcast");
        cmd.setSchema().setName("s").setSchemaData(new byte[0]).setType(Schema.Type.String);
        for (int i = 0; i < 200_000; i++) {
            cmd.getSchema().addProperty().setKey("k" + i).setValue("");
            cmd.addMetadata().setKey("m" + i).setValue("");
        }
        assertNull(BroadcastMode.explain(cmd, true));
    }
}
