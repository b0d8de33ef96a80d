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

    /**
     * A graceful stop hands the topic over at once, but the restarted broker is away until it is ready again, and
     * each consumer retry whose lookup goes to it (one in two with a two-broker service URL) fails and costs another
     * back-off step: as for a broker loss, 18 steps of up to {@link #CLIENT_MAX_BACKOFF_SECONDS} (measured: the
     * slowest of 1,000 consumers received again after 21.8 s in one run and 31.5 s in another).
     */
    static final int RESTART_RECOVERY_SECONDS = 18 * CLIENT_MAX_BACKOFF_SECONDS;

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
