package io.github.pulsarbroadcast.cluster;

import org.testng.annotations.Test;

/**
 * Fault (d): a rolling restart of every broker, one at a time, each stopped gracefully (it hands its topics over) and
 * started again, the next one only when the subscription's mark-delete position follows the consumers again. Nothing
 * lost, order kept, duplicates within {@link #MAX_DUPLICATES} per restart, every consumer receiving again within
 * {@link #RESTART_RECOVERY_SECONDS}.
 *
 * <p>Threading: see {@link ChaosTestBase}.
 */
@Test(groups = "chaos")
public class RollingRestartChaosTest extends ChaosTestBase {

    /** A graceful stop hands the topic over at once; consumers reconnect within a few back-off steps. */
    static final int RESTART_RECOVERY_SECONDS = 30;

    @Test(timeOut = 900_000)
    public void rollingRestartOfEveryBroker() {
        FaultFigures.Mark all = mark();
        for (String broker : cluster.brokers()) {
            String owner = owner();
            FaultFigures.Mark mark = mark();
            cluster.restart(broker);
            observe("graceful restart of " + broker + (broker.equals(owner) ? " (the owner)" : " (not the owner)"),
                    mark, mark.seq, RESTART_RECOVERY_SECONDS, 120, 0)
                    .assertBounds(RESTART_RECOVERY_SECONDS, MAX_DUPLICATES);
            awaitMarkDeleteFollowing(GRACE_SECONDS + 60);
        }
        FaultFigures.measure("rolling restart of every broker", all, fleet, publisher, 0, awaitCaughtUp(120)).print()
                .assertBounds(RESTART_RECOVERY_SECONDS, MAX_DUPLICATES * cluster.brokers().size());
    }
}
