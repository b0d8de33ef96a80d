package io.github.pulsarbroadcast.cluster;

import static org.testng.Assert.assertNotEquals;

import org.testng.annotations.Test;

/**
 * Fault (a): the broker that owns the topic is killed with SIGKILL under a broadcast fleet; the other broker takes the
 * topic once the dead broker's metadata session has expired. Nothing lost, order kept, duplicates within
 * {@link #MAX_DUPLICATES}, every consumer receiving again within {@link #BROKER_LOSS_RECOVERY_SECONDS}.
 *
 * <p>Threading: see {@link ChaosTestBase}.
 */
@Test(groups = "chaos")
public class BrokerKillChaosTest extends ChaosTestBase {

    @Test(timeOut = 600_000)
    public void owningBrokerKilled() {
        String owner = owner();
        FaultFigures.Mark mark = mark();
        cluster.kill(owner);
        try {
            FaultFigures figures = observe("kill -9 of the owning broker (" + owner + ")", mark,
                    BROKER_LOSS_RECOVERY_SECONDS + 60, 180, 0);
            assertNotEquals(owner(), owner, "the topic did not move");
            figures.assertBounds(BROKER_LOSS_RECOVERY_SECONDS, MAX_DUPLICATES);
        } finally {
            cluster.start(owner);
        }
    }
}
