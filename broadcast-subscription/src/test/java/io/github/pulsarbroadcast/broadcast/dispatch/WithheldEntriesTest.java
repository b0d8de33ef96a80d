package io.github.pulsarbroadcast.broadcast.dispatch;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import org.apache.bookkeeper.mledger.Entry;
import org.apache.bookkeeper.mledger.impl.EntryImpl;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.testng.annotations.BeforeMethod;
import org.testng.annotations.Test;

/**
 * A topic written with transactions (regression, forty-first session; design.md "Transactions"): commit and abort
 * markers, messages of aborted transactions and entries whose metadata cannot be parsed are sent to no consumer and
 * count as acknowledged by each consumer that reaches them (the mark-delete position moves past them); the tail reads
 * no further than the max read position while a transaction is open, and goes on once it ends. Before, every consumer
 * was sent all of them, and messages of open transactions as soon as they were written.
 *
 * <p>Ledgers of 5 entries from id 3, a window of 10, reads of 5 (the model's defaults).
 */
public class WithheldEntriesTest {

    private ModelHarness world;
    private ModelLedger ledger;
    private SubscriptionEngine engine;

    @BeforeMethod(alwaysRun = true)
    public void newWorld() {
        world = new ModelHarness();
        ledger = new ModelLedger(3, 5);
        ledger.transactions.buffered = true; // as a broker with transactions on
        engine = world.newEngine("persistent://t/ns/transactions", ledger);
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void markersAbortedMessagesAndUnparsableEntriesAreForNoConsumer() {
        assertTrue(withheld(TestEntries.marker(1, 0)), "a commit marker");
        assertTrue(withheld(TestEntries.inTransaction(1, 1, ModelTransactions.ABORTED_TXN)), "an aborted transaction's");
        assertFalse(withheld(TestEntries.inTransaction(1, 2, 8)), "a committed transaction's");
        assertFalse(withheld(TestEntries.entry(1, 3, 1)), "a plain message");
        assertTrue(withheld(EntryImpl.create(1, 4, Unpooled.wrappedBuffer(new byte[] {1, 2, 3}))),
                "metadata that cannot be parsed");
        // Regression (forty-fourth session, a read-only review): these threw IndexOutOfBoundsException out of the
        // broker entry metadata's skip, which stock parses inside its catch-all; the pass that read them stopped.
        for (int shape = 0; shape < 3; shape++) {
            Entry malformed = TestEntries.malformed(1, 5 + shape, shape);
            ByteBuf data = malformed.getDataBuffer();
            assertTrue(withheld(malformed), "no Pulsar message at all, shape " + shape);
            assertEquals(data.refCnt(), 0, "its buffer released, shape " + shape);
        }
    }

    private boolean withheld(Entry entry) {
        WindowEntry e = WindowEntry.of(entry, ledger);
        e.release();
        return e.withheld;
    }

    /**
     * One consumer at the tail, one that had no permits while everything was published (served from storage and the
     * window later): neither is sent a marker nor keeps an acknowledgement range for one, and once both acknowledged
     * what they got the mark-delete position is the last entry, itself a marker.
     */
    @Test(groups = "unit", timeOut = 10_000)
    public void markersAreSentToNoConsumerAndCountAsAcknowledged() throws Exception {
        List<PositionImpl> liveGot = new ArrayList<>();
        List<PositionImpl> lateGot = new ArrayList<>();
        BroadcastConsumer late = engine.join(1, "late", ModelHarness.recording(lateGot), InitialPosition.Earliest, 0);
        BroadcastConsumer live = engine.join(2, "live", ModelHarness.recording(liveGot), InitialPosition.Earliest, 0);
        settle();
        engine.flow(live, 1000);
        settle();
        List<PositionImpl> expected = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            boolean marker = i == 2 || i == 10 || i == 11 || i == 29;
            PositionImpl p = marker ? ledger.publishWithheld(false) : ledger.publish(false);
            if (!marker) {
                expected.add(p);
            }
            settle();
        }
        engine.flow(late, 1000);
        settle();
        assertEquals(liveGot, expected, "live: everything but the markers, in order");
        assertEquals(lateGot, expected, "late: everything but the markers, in order");
        assertEquals(live.cursor.individualAckRanges(), 0, "no acknowledgement range per marker (the review's find)");
        assertEquals(late.cursor.individualAckRanges(), 0, "no acknowledgement range per marker");
        acknowledgeAll(live, liveGot);
        acknowledgeAll(late, lateGot);
        engine.sync();
        settle();
        assertEquals(ledger.markDeleted(), PositionImpl.get(8, 4), "the mark-delete position past the last marker");
    }

    /**
     * While a transaction is open the tail reads nothing past the entry before its first message (and does not spin:
     * it reads again after 10 ms doubling to 100 ms); once the transaction ends, everything comes, in order.
     */
    @Test(groups = "unit", timeOut = 10_000)
    public void anOpenTransactionHoldsTheTailUntilItEnds() throws Exception {
        List<PositionImpl> got = new ArrayList<>();
        joinWithPermits(got);
        List<PositionImpl> before = publish(3);
        ledger.transactions.open(ledger.lastConfirmed());
        List<PositionImpl> held = publish(4);
        world.advance(1_000);
        settle();
        assertEquals(got, before, "nothing past the max read position");
        ledger.transactions.endAll();
        world.advance(100);
        settle();
        List<PositionImpl> all = new ArrayList<>(before);
        all.addAll(held);
        assertEquals(got, all, "the rest once the transaction ended, in order");
    }

    /**
     * A read that waited for entries keeps the max read position it was issued with: woken by a write that became
     * readable meanwhile, it returns nothing, and the tail reads again at once (not after a transaction's wait).
     */
    @Test(groups = "unit", timeOut = 10_000)
    public void aWokenReadThatFoundNothingReadsAgainAtOnce() throws Exception {
        List<PositionImpl> got = new ArrayList<>();
        List<PositionImpl> first = publish(2);
        joinWithPermits(got); // its read waits, bounded by the last entry (the buffer's max read position)
        assertEquals(got, first);
        PositionImpl next = ledger.publish(false);
        settle();
        assertEquals(got.get(got.size() - 1), next, "read at once, no time passed");
    }

    private void acknowledgeAll(BroadcastConsumer bc, List<PositionImpl> got) {
        for (PositionImpl p : got) {
            engine.acknowledge(bc, p.getLedgerId(), p.getEntryId(), false);
        }
    }

    private void joinWithPermits(List<PositionImpl> into) throws Exception {
        world.joinWithPermits(engine, ledger, 1, "c", into, InitialPosition.Earliest);
    }

    private List<PositionImpl> publish(int n) {
        return world.publishSettled(ledger, n);
    }

    private void settle() {
        world.settle(ledger);
    }
}
