package io.github.pulsarbroadcast.cluster;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import org.awaitility.core.ConditionTimeoutException;
import org.testng.annotations.Test;

/**
 * Fault (b): one of the 3 bookies is killed with SIGKILL under a broadcast fleet (ledgers with ensemble 3, write quorum
 * 2, ack quorum 2) and started again {@value #BOOKIE_DOWN_SECONDS} s later, as a supervisor would. With an ensemble of
 * 3 on exactly 3 bookies BookKeeper has no bookie to replace the dead one with, so writes stop until it is back; the
 * test prints whether they did. Nothing lost, order kept, duplicates within {@link #MAX_DUPLICATES}, every consumer
 * receiving again within {@link #BOOKIE_RECOVERY_SECONDS}.
 *
 * <p>Threading: see {@link ChaosTestBase}.
 */
@Test(groups = "chaos")
public class BookieKillChaosTest extends ChaosTestBase {

    static final int BOOKIE_DOWN_SECONDS = 20;
    /** The bookie's absence, its start-up, and the producer's and the managed ledger's retries (back-off steps). */
    static final int BOOKIE_RECOVERY_SECONDS = BOOKIE_DOWN_SECONDS + 60;

    @Test(timeOut = 600_000)
    public void oneBookieKilledAndRestarted() {
        String bookie = "bookie-1";
        FaultFigures.Mark mark = mark();
        cluster.kill(bookie);
        int issuedAtKill = publisher.issued();
        boolean storedWithout;
        try {
            await("messages stored without " + bookie).atMost(Duration.ofSeconds(BOOKIE_DOWN_SECONDS))
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> publisher.storedBelow() > issuedAtKill + RATE * (BOOKIE_DOWN_SECONDS / 2));
            storedWithout = true;
        } catch (ConditionTimeoutException e) {
            storedWithout = false;
        }
        System.out.printf("FAULT kill -9 of %s: %s; %d messages stored after the kill, %d issued%n", bookie,
                storedWithout ? "publishing went on without it" : "publishing stalled without it",
                publisher.storedBelow() - issuedAtKill, publisher.issued() - issuedAtKill);
        await("the bookie's planned absence").atMost(Duration.ofSeconds(BOOKIE_DOWN_SECONDS + 5))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> Millis.now() - mark.timeMs >= BOOKIE_DOWN_SECONDS * 1000);
        cluster.start(bookie);
        observe("kill -9 of " + bookie + ", started again after " + (Millis.now() - mark.timeMs) / 1000 + " s", mark,
                issuedAtKill, BOOKIE_RECOVERY_SECONDS + 60, 180, 0)
                .assertBounds(BOOKIE_RECOVERY_SECONDS, MAX_DUPLICATES);
    }
}
