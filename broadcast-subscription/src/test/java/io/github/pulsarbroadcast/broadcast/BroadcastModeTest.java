package io.github.pulsarbroadcast.broadcast;

import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertNull;
import static org.testng.Assert.assertTrue;

import org.apache.pulsar.common.api.proto.CommandSubscribe;
import org.apache.pulsar.common.api.proto.CommandSubscribe.SubType;
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
}
