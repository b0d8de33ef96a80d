package io.github.pulsarbroadcast.cluster;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
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
 *   <li>roll-back: every message published while the topic was on a broker with the plugin reaches every consumer;
 *       afterwards only the active consumer receives;</li>
 *   <li>install again: what was published without the plugin stays lost to every consumer but the active one (the
 *       measured figure behind the warning of docs/install.md).</li>
 * </ul>
 *
 * <p>Threading: see {@link ChaosTestBase}; the three tests run in priority order on one cluster.
 */
@Test(groups = "chaos")
public class RollingPluginChaosTest extends ChaosTestBase {

    private final Map<String, Boolean> plugin = new HashMap<>();
    /** The sequence number issued when the topic left the last broker with the plugin (roll-back). */
    private int rolledBackAt = -1;

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

    @Test(timeOut = 600_000, priority = 2)
    public void rollingRollBack() {
        awaitEveryoneReached(publisher.issued() - 1);
        int phaseStart = publisher.issued();
        for (String broker : cluster.brokers()) {
            boolean fromPlugin = plugin.get(owner());
            int before = publisher.issued();
            cluster.plugin("uninstall", broker);
            cluster.restart(broker);
            plugin.put(broker, false);
            String owner = owner();
            System.out.printf("ROLL roll-back: %s restarted without the plugin; the topic is on %s%n", broker, owner);
            if (fromPlugin && !plugin.get(owner)) {
                rolledBackAt = before;
                int after = publisher.issued();
                int[] missing = new int[CONSUMERS];
                int lostBefore = 0;
                for (int i = 0; i < CONSUMERS; i++) {
                    Recorder r = fleet.recorders().get(i);
                    lostBefore += r.missingIn(phaseStart, before - 1);
                    missing[i] = r.missingIn(before, after - 1);
                }
                System.out.printf("ROLL roll-back: of the %d messages published during the restart that moved the"
                                + " topic to a broker without the plugin, a consumer missed P50 %d, P99 %d, max %d%n",
                        after - before, FaultFigures.percentile(missing, 50), FaultFigures.percentile(missing, 99),
                        Arrays.stream(missing).max().orElse(0));
                assertEquals(lostBefore, 0, "messages published before the roll-back reached the owner were lost");
            }
        }
        assertTrue(rolledBackAt >= 0, "the topic never left the brokers with the plugin");
        int probe = publisher.issued() + RATE;
        await("one consumer receiving after the roll-back").atMost(Duration.ofSeconds(60))
                .until(() -> fleet.recorders().stream().anyMatch(r -> r.max() >= probe));
        int receiving = (int) fleet.recorders().stream().filter(r -> r.max() >= probe).count();
        System.out.printf("ROLL after the roll-back: %d of %d consumers receive (stock Failover)%n", receiving,
                CONSUMERS);
        assertEquals(receiving, 1, "after the roll-back only the active consumer receives");
    }

    @Test(timeOut = 600_000, priority = 3)
    public void rollingInstallAgainAfterTheRollBack() {
        int stockFrom = rolledBackAt;
        int stockTo = rollingInstall("install again") - 1;
        int[] lost = new int[CONSUMERS];
        for (int i = 0; i < CONSUMERS; i++) {
            lost[i] = fleet.recorders().get(i).missingIn(stockFrom, stockTo);
        }
        System.out.printf("ROLL install again: of the %d messages published while no broker with the plugin owned the"
                        + " topic, a consumer never received P50 %d, P99 %d, max %d (the active consumer: %d)%n",
                stockTo - stockFrom + 1, FaultFigures.percentile(lost, 50), FaultFigures.percentile(lost, 99),
                Arrays.stream(lost).max().orElse(0), Arrays.stream(lost).min().orElse(0));
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
