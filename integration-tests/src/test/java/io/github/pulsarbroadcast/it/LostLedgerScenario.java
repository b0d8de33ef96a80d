package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.bookkeeper.bookie.LedgerStorage;
import org.apache.bookkeeper.proto.BookieServer;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.impl.MessageIdImpl;

/**
 * A ledger that storage lost under a broadcast consumer that must catch up through it: the broker's
 * {@code autoSkipNonRecoverableData} decides whether the consumer waits (the stock default) or is moved past it
 * ({@link BroadcastLostLedgerWaitsTest}, {@link BroadcastLostLedgerSkipTest}). The ledger is lost as an operator's
 * mistake or the loss of every bookie that held it loses it: deleted from BookKeeper's metadata, then garbage-collected
 * from the bookie, so that neither the broker's open read handle nor a new one can read it.
 *
 * <p>Ledgers of 5 entries, the broker's entry cache off, a window and reads of 3: "late" joins and leaves (its
 * position is kept), 30 messages fill six ledgers, which "live" receives; the second ledger is lost; then "late"
 * comes back, behind the window, and catches up from storage.
 *
 * <p>Threading: TestNG's test thread only.
 */
abstract class LostLedgerScenario extends BroadcastTestBase {

    static final String SUBSCRIPTION = "fleet";

    /** The messages sent, in order, and those of them in the lost ledger. */
    static final class Lost {
        final List<String> sent = new ArrayList<>();
        final List<String> inLostLedger = new ArrayList<>();
        long ledgerId;
        Producer<String> producer;
        Consumer<String> live;
    }

    @Override
    protected void configureBroker(ServiceConfiguration conf) {
        conf.setManagedLedgerMaxEntriesPerLedger(5);
        conf.setManagedLedgerMinLedgerRolloverTimeMinutes(0);
        conf.setManagedLedgerCacheSizeMB(0);
        conf.getProperties().setProperty("broadcastWindowMaxEntries", "3");
        conf.getProperties().setProperty("broadcastMaxReadBatchSize", "3");
    }

    /** Runs the scenario up to the lost ledger; "late" is not connected when it returns. */
    Lost loseTheSecondLedger(String topic) throws Exception {
        broadcastConsumer(topic, SUBSCRIPTION, "late").close();
        Lost lost = new Lost();
        lost.live = closeAfterTest(broadcastConsumer(topic, SUBSCRIPTION, "live"));
        lost.producer = closeAfterTest(producer(topic));
        lost.sent.addAll(publish(lost.producer, "m", 30));
        List<Message<String>> received = take(lost.live, 30);
        assertEquals(values(received), lost.sent, "live");
        Map<Long, List<String>> byLedger = new LinkedHashMap<>();
        for (Message<String> m : received) {
            long ledgerId = ledgerOf(m);
            byLedger.computeIfAbsent(ledgerId, k -> new ArrayList<>()).add(m.getValue());
            lost.live.acknowledge(m);
        }
        lost.ledgerId = new ArrayList<>(byLedger.keySet()).get(1);
        lost.inLostLedger.addAll(byLedger.get(lost.ledgerId));
        assertEquals(lost.inLostLedger.size(), 5, "ledgers of 5 entries: " + byLedger);
        lose(lost.ledgerId);
        return lost;
    }

    /** Deletes the ledger from BookKeeper and has every bookie drop its entries: no handle can read it any more. */
    void lose(long ledgerId) throws Exception {
        cluster.broker().getBookKeeperClient().deleteLedger(ledgerId);
        for (BookieServer bookie : cluster.bookies()) {
            bookie.getBookie().getLedgerStorage().forceGC();
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> !onAnyBookie(ledgerId));
    }

    static long ledgerOf(Message<String> message) {
        return ((MessageIdImpl) message.getMessageId()).getLedgerId();
    }

    /**
     * After {@link #loseTheSecondLedger}: "live" leaves (its position is kept), the topic is loaded again, and "late"
     * is the first back, so the subscription's tail read starts at its position and meets the lost ledger with "late"
     * waiting there.
     */
    Consumer<String> reloadWithLateFirst(String topic, Lost lost) throws Exception {
        lost.live.close();
        cluster.admin().topics().unload(topic);
        return closeAfterTest(broadcastConsumer(topic, SUBSCRIPTION, "late"));
    }

    private boolean onAnyBookie(long ledgerId) throws Exception {
        for (BookieServer bookie : cluster.bookies()) {
            LedgerStorage storage = bookie.getBookie().getLedgerStorage();
            if (storage.ledgerExists(ledgerId)) {
                return true;
            }
        }
        return false;
    }

    /** The value of {@code name} for this topic's subscription in a scrape of the broker's metrics. */
    double metric(String topic, String name) throws Exception {
        String body = Scrapes.get(cluster.webServiceUrl(), "/metrics/");
        return Scrapes.sample(body, name, "topic=\"" + topic + "\",subscription=\"" + SUBSCRIPTION + "\"");
    }
}
