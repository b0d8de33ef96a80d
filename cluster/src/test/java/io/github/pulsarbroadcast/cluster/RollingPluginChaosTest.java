package io.github.pulsarbroadcast.cluster;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertTrue;

import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import org.testng.annotations.Test;

/**
 * Fault (e): the plugin rolled onto a cluster that ran without it, rolled back, and rolled on again, each time the way
 * docs/install.md says (install-plugin.sh, or its --uninstall, on one broker, restart it, then the next; load shedding
 * off), while a fleet of broadcast consumers consumes. Without the plugin a broadcast subscription is a stock Failover
 * subscription: only its active consumer receives, and its acknowledgements count for the whole subscription.
 * <ul>
 *   <li>install: once the topic is on a broker with the plugin, every consumer receives every message from the
 *       subscription's position on, in order (it cannot get what stock Failover never sent it);</li>
 *   <li>roll-back: the consumers are closed first and stay closed while no broker has the plugin;</li>
 *   <li>install again, then the consumers return: every message published while they were closed reaches every
 *       consumer (each resumes at its own saved position; nobody acknowledged for the subscription meanwhile).</li>
 * </ul>
 * Until the thirteenth session the roll-back left the consumers connected, and this test measured what they lost:
 * 274 of 278 messages per consumer for the restart that moved the topic to a broker without the plugin (run 6,
 * docs/install.md), everything but the active consumer's share afterwards.
 *
 * <p>Threading: see {@link ChaosTestBase}; the three tests run in priority order on one cluster.
 */
@Test(groups = "chaos")
public class RollingPluginChaosTest extends ChaosTestBase {

    private final Map<String, Boolean> plugin = new HashMap<>();
    /** The first message that no consumer received before the roll-back closed them all. */
    private int pausedAt = -1;

    @Override
    protected String[] upOptions() {
        String[] base = super.upOptions();
        String[] options = Arrays.copyOf(base, base.length + 1);
        options[base.length] = "--no-plugin";
        return options;
    }

    /** Without the plugin only the active consumer receives: wait until one consumer has the first 3 s. */
    @Override
    protected void awaitSteady() {
        cluster.brokers().forEach(b -> plugin.put(b, false));
        await("one consumer receiving").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                .until(() -> fleet.recorders().stream().anyMatch(r -> r.firstMissing() > RATE * 3));
        int receiving = (int) fleet.recorders().stream().filter(r -> r.size() > 0).count();
        System.out.printf("ROLL without the plugin: %d of %d consumers receive (stock Failover)%n", receiving,
                CONSUMERS);
        assertEquals(receiving, 1, "without the plugin only the active consumer receives");
    }

    @Test(timeOut = 600_000, priority = 1)
    public void rollingInstallOntoAClusterWithoutThePlugin() {
        rollingInstall("install");
    }

    /**
     * The roll-back as docs/install.md says it: the broadcast consumers are closed first (a stock Failover subscription
     * cannot serve them, and what its active consumer acknowledged would count for everyone), then each broker is
     * uninstalled and restarted while the producer keeps publishing. Nothing receives or acknowledges meanwhile.
     */
    @Test(timeOut = 600_000, priority = 2)
    public void rollingRollBackWithTheConsumersClosed() throws Exception {
        // Every consumer has received every message since the install reached the plugin (the first test) up to here.
        pausedAt = awaitEveryoneReached(publisher.issued() - 1) + 1;
        fleet.pause(Duration.ofSeconds(60));
        System.out.printf("ROLL roll-back: %d consumers closed; every one had received message %d%n", CONSUMERS,
                pausedAt - 1);
        for (String broker : cluster.brokers()) {
            cluster.plugin("uninstall", broker);
            cluster.restart(broker);
            plugin.put(broker, false);
            System.out.printf("ROLL roll-back: %s restarted without the plugin; the topic is on %s%n", broker, owner());
        }
        assertFalse(plugin.get(owner()), "the topic is on a broker without the plugin");
        await("messages published without the plugin").atMost(Duration.ofSeconds(30))
                .until(() -> publisher.issued() > pausedAt + RATE * 5);
    }

    /**
     * Installs the plugin again (the same rolling install), then reconnects the consumers by name: each resumes at its
     * own saved position, so every message published while they were closed, on the brokers without the plugin
     * included, reaches every consumer.
     */
    @Test(timeOut = 600_000, priority = 3)
    public void rollingInstallAgainThenTheConsumersReturn() throws Exception {
        int stockFrom = pausedAt;
        for (String broker : cluster.brokers()) {
            cluster.plugin("install", broker);
            cluster.restart(broker);
            plugin.put(broker, true);
            System.out.printf("ROLL install again: %s restarted with the plugin; the topic is on %s%n", broker,
                    owner());
        }
        assertTrue(plugin.get(owner()), "the topic is on a broker with the plugin");
        FaultFigures.Mark mark = mark();
        int resumedAt = publisher.issued();
        mark.faultSeq = resumedAt;
        fleet.resume(Duration.ofSeconds(120));
        int last = awaitEveryoneReached(publisher.issued() - 1);
        // Messages from the close on: every one must have reached every consumer (none received them before).
        FaultFigures figures = FaultFigures.measure("roll-back and install again, the consumers closed meanwhile",
                mark, fleet, publisher, stockFrom, last).print();
        System.out.printf("ROLL install again: %d messages were published while the consumers were closed (from %d"
                + " to %d: the roll-back, the brokers without the plugin and the install again); checked up to %d%n",
                resumedAt - stockFrom, stockFrom, resumedAt - 1, last);
        figures.assertBounds(BROKER_LOSS_RECOVERY_SECONDS, MAX_DUPLICATES);
    }

    /**
     * Installs the plugin on every broker and restarts it, one at a time. Returns the sequence number issued when the
     * restart began that moved the topic to a broker with the plugin; asserts that every consumer then receives every
     * message from its join on, in order, and joined no later than that restart's end.
     */
    private int rollingInstall(String label) {
        FaultFigures.Mark mark = null;
        int reached = -1;
        int reachedEnd = -1;
        for (String broker : cluster.brokers()) {
            String owner = owner();
            // The restart of the owner moves the topic to the other broker: to the plugin if that one has it. What
            // happens before is stock Failover (even the active consumer can miss messages that a consumer briefly
            // active during a move acknowledged), so the checks start here.
            boolean reaches = !plugin.get(owner) && broker.equals(owner) && plugin.get(otherBroker(broker));
            if (reaches) {
                fleet.rebase();
                mark = mark();
                reached = publisher.issued();
            }
            cluster.plugin("install", broker);
            cluster.restart(broker);
            plugin.put(broker, true);
            System.out.printf("ROLL %s: %s restarted with the plugin; the topic is on %s%n", label, broker, owner());
            if (reaches) {
                reachedEnd = publisher.issued();
            }
        }
        assertTrue(reached >= 0 && plugin.get(owner()), "the topic never reached a broker with the plugin");
        int last = awaitEveryoneReached(publisher.issued() - 1);
        FaultFigures figures = FaultFigures.measure("rolling " + label + " of the plugin", mark, fleet, publisher,
                last, last).print();
        int[] joins = new int[CONSUMERS];
        for (int i = 0; i < CONSUMERS; i++) {
            int[] seqs = fleet.recorders().get(i).since(mark.index[i])[0];
            joins[i] = seqs.length == 0 ? -1 : seqs[0];
        }
        System.out.printf("ROLL %s: the restart that moved the topic to a broker with the plugin ran from message %d"
                        + " to %d; consumers' first message since that restart began: P50 %d, min %d, max %d%n",
                label, reached, reachedEnd, FaultFigures.percentile(joins, 50), Arrays.stream(joins).min().orElse(-1),
                Arrays.stream(joins).max().orElse(-1));
        assertTrue(Arrays.stream(joins).max().orElse(-1) <= reachedEnd, "a consumer joined after the topic reached"
                + " the plugin (it lost messages): " + Arrays.toString(joins));
        // As for a broker loss: the restarted owner is away until ready; retries whose lookup goes to it fail.
        figures.assertBounds(BROKER_LOSS_RECOVERY_SECONDS, MAX_DUPLICATES);
        return reached;
    }

    private int awaitEveryoneReached(int seq) {
        await("every consumer has received message " + seq).atMost(Duration.ofSeconds(120))
                .pollInterval(Duration.ofMillis(200)).until(() -> fleet.everyoneReached() >= seq);
        return seq;
    }
}
