package io.github.pulsarbroadcast.broadcast.dispatch;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertNull;
import static org.testng.Assert.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.ArrayList;
import java.util.Set;
import org.apache.bookkeeper.mledger.Entry;
import org.apache.bookkeeper.mledger.impl.EntryImpl;
import org.apache.pulsar.common.intercept.AppendBrokerTimestampMetadataInterceptor;
import org.apache.pulsar.common.protocol.Commands;
import java.util.List;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.testng.annotations.Test;

/** The window keeps recent entries in order, within its bounds, and gives every reference back. */
public class EntryWindowTest {

    @Test(groups = "unit", timeOut = 10_000)
    public void holdsEntriesInOrderAndCoversUpToTheTail() {
        EntryWindow window = new EntryWindow(100, Long.MAX_VALUE);
        EntryBatch batch = TestEntries.batch(5, 0, 10);
        window.append(batch);
        batch.release();
        assertEquals(window.size(), 10);
        assertEquals(window.firstPosition(), PositionImpl.get(5, 0));
        assertEquals(window.after(), PositionImpl.get(5, 10));
        assertTrue(window.covers(PositionImpl.get(5, 9)));
        assertFalse(window.covers(PositionImpl.get(5, 10)), "the tail is not in the window yet");
        assertEquals(window.indexAtOrAfter(PositionImpl.get(5, 4)), 4);
        assertEquals(window.indexAtOrAfter(PositionImpl.get(4, 99)), 0);
        window.clear();
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void evictsTheOldestBeyondTheCountBoundAndReleasesThem() {
        EntryWindow window = new EntryWindow(4, Long.MAX_VALUE);
        EntryBatch batch = TestEntries.batch(1, 0, 10);
        List<WindowEntry> all = new ArrayList<>();
        for (int i = 0; i < batch.size(); i++) {
            all.add(batch.get(i));
        }
        window.append(batch);
        batch.release();
        assertEquals(window.size(), 4);
        assertEquals(window.firstPosition(), PositionImpl.get(1, 6));
        assertEquals(all.get(0).refCnt(), 0, "evicted entries are released");
        assertEquals(all.get(9).refCnt(), 1, "kept entries hold exactly the window's reference");
        window.evictBefore(PositionImpl.get(1, 8));
        assertEquals(window.size(), 2);
        assertEquals(all.get(7).refCnt(), 0);
        window.clear();
        assertEquals(all.get(9).refCnt(), 0);
        assertNull(window.firstPosition());
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void evictsBeyondTheByteBound() {
        EntryBatch batch = TestEntries.batch(1, 0, 10);
        int entrySize = batch.get(0).payloadSize();
        EntryWindow window = new EntryWindow(1000, 3L * entrySize);
        window.append(batch);
        batch.release();
        assertEquals(window.size(), 3);
        window.clear();
    }

    /**
     * Entries read from storage may be pooled slices of a larger buffer, whose duplicates live in the root buffer's
     * index space; the payload must still start at the message metadata, with or without broker entry metadata.
     */
    @Test(groups = "unit", timeOut = 10_000)
    public void payloadIsCorrectForAPooledSliceWithBrokerEntryMetadata() {
        Entry plain = TestEntries.entry(1, 0, 1);
        ByteBuf message = plain.getDataBuffer();
        ByteBuf withBrokerMetadata = Commands.addBrokerEntryMetadata(message.retainedDuplicate(),
                Set.of(new AppendBrokerTimestampMetadataInterceptor()));
        byte[] messageBytes = ByteBufUtil.getBytes(message);
        byte[] entryBytes = ByteBufUtil.getBytes(withBrokerMetadata);
        ByteBuf root = PooledByteBufAllocator.DEFAULT.directBuffer(4096);
        root.writeZero(777); // the entry does not start at index 0 of its buffer
        root.writeBytes(entryBytes);
        root.writeZero(100);
        ByteBuf slice = root.retainedSlice(777, entryBytes.length);
        root.release();
        WindowEntry e = WindowEntry.of(EntryImpl.create(1, 0, slice), TestEntries.storage());
        slice.release();

        ByteBuf payload = e.payloadFor(false);
        assertEquals(ByteBufUtil.getBytes(payload), messageBytes);
        payload.release();
        ByteBuf full = e.payloadFor(true);
        assertEquals(ByteBufUtil.getBytes(full), entryBytes);
        full.release();
        assertEquals(e.payloadSize(), messageBytes.length);
        e.release();
        withBrokerMetadata.release();
        plain.release();
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void windowEntryReadsTheBatchSize() {
        WindowEntry e = WindowEntry.of(TestEntries.entry(1, 0, 7), TestEntries.storage());
        assertEquals(e.messages, 7);
        assertTrue(e.payloadSize() > 0);
        e.release();
        assertEquals(e.refCnt(), 0);
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void connectionSendRetainsEachEntryOnceForAnyNumberOfConsumers() {
        EntryBatch batch = TestEntries.batch(1, 0, 3);
        ConnectionSend send = new ConnectionSend("t", -1, new DispatchCounters());
        for (int c = 0; c < 40; c++) { // more consumers than the initial arrays hold
            send.startConsumer(null, 0);
            for (int i = c % 3; i < 3; i++) {
                send.addEntry(batch.get(i));
            }
            send.endConsumer();
        }
        assertFalse(send.isEmpty());
        for (int i = 0; i < 3; i++) {
            assertEquals(batch.get(i).refCnt(), 2, "the batch's reference and one for the send");
        }
        send.release();
        batch.release();
        assertEquals(batch.size(), 0);
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void connectionSendDropsConsumersThatGotNothing() {
        ConnectionSend send = new ConnectionSend("t", -1, new DispatchCounters());
        send.startConsumer(null, 0);
        send.endConsumer();
        assertTrue(send.isEmpty());
    }

    /** Issue 10, suspect 9: all windows of a broker share one bound; a window makes room from its own entries. */
    @Test(groups = "unit", timeOut = 10_000)
    public void windowsShareTheBrokerBudgetAndGiveItBack() {
        EntryBatch probe = TestEntries.batch(1, 0, 1);
        long entryBytes = probe.get(0).payloadSize();
        probe.release();
        io.github.pulsarbroadcast.broadcast.WindowBudget budget =
                new io.github.pulsarbroadcast.broadcast.WindowBudget(entryBytes * 5);
        EntryWindow first = new EntryWindow(100, Long.MAX_VALUE, budget);
        EntryWindow second = new EntryWindow(100, Long.MAX_VALUE, budget);
        EntryBatch a = TestEntries.batch(1, 0, 4);
        first.append(a);
        a.release();
        assertEquals(first.size(), 4);
        EntryBatch b = TestEntries.batch(2, 0, 3);
        List<WindowEntry> bEntries = new ArrayList<>();
        for (int i = 0; i < b.size(); i++) {
            bEntries.add(b.get(i));
        }
        second.append(b);
        b.release();
        assertEquals(second.size(), 1, "one entry of room left: the second window keeps its newest entry only");
        assertEquals(second.firstPosition(), PositionImpl.get(2, 2));
        assertEquals(bEntries.get(0).refCnt(), 0, "entries kept out are released");
        assertEquals(budget.used(), entryBytes * 5);
        first.clear();
        second.clear();
        assertEquals(budget.used(), 0, "every byte is given back");
    }
}
