package io.github.pulsarbroadcast.broadcast.dispatch;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertNull;
import static org.testng.Assert.assertTrue;

import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.IllegalReferenceCountException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.common.api.proto.BaseCommand;
import org.apache.pulsar.common.protocol.ByteBufPair;
import org.apache.pulsar.common.protocol.Commands;
import org.testng.ITestResult;
import org.testng.annotations.AfterMethod;
import org.testng.annotations.BeforeMethod;
import org.testng.annotations.DataProvider;
import org.testng.annotations.Test;

/**
 * Contract: the frames {@link MessageFrames} writes are byte for byte what stock Pulsar writes for the same messages
 * ({@code Commands.newMessageCommand} + {@code serializeCommandMessageWithSize}, header then entry), in either
 * layout (copied or shared), so that every client reads them as it reads stock messages; small entries are copied
 * only where allowed, large ones never; no buffer grows with the pass; every reference taken is given back.
 */
public class MessageFramesTest {

    /** Hands out unpooled direct buffers and remembers them, so that a test can check that every one was freed. */
    private static final class RecordingAllocator extends AbstractByteBufAllocator {
        final List<ByteBuf> made = new ArrayList<>();

        RecordingAllocator() {
            super(true);
        }

        @Override
        protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
            throw new AssertionError("MessageFrames allocates direct buffers only");
        }

        @Override
        protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
            ByteBuf b = UnpooledByteBufAllocator.DEFAULT.directBuffer(initialCapacity, maxCapacity);
            made.add(b);
            return b;
        }

        @Override
        public boolean isDirectBufferPooled() {
            return false;
        }

        void assertAllFreed() {
            for (ByteBuf b : made) {
                assertEquals(b.refCnt(), 0, "a buffer MessageFrames allocated was not freed");
            }
        }
    }

    private RecordingAllocator alloc;

    @BeforeMethod(alwaysRun = true)
    public void newAllocator() {
        alloc = new RecordingAllocator();
    }

    @AfterMethod(alwaysRun = true)
    public void everyBufferFreed(ITestResult result) {
        if (result.isSuccess()) {
            alloc.assertAllFreed();
        }
    }

    @DataProvider
    public Object[][] messages() {
        return new Object[][] {
                // consumer id, ledger, entry, partition, consumer epoch
                {0L, 0L, 0L, -1, Commands.DEFAULT_CONSUMER_EPOCH},
                {7L, 12L, 345L, -1, 0L},
                {1L << 40, Long.MAX_VALUE, Long.MAX_VALUE, Integer.MAX_VALUE, Long.MAX_VALUE},
                {123_456L, 98_765L, 1L, 3, 17L},
                {-1L, -1L, -1L, Integer.MIN_VALUE, Commands.DEFAULT_CONSUMER_EPOCH},
        };
    }

    @Test(groups = "unit", timeOut = 10_000, dataProvider = "messages")
    public void aFrameIsWhatStockPulsarWritesInEitherLayout(long consumerId, long ledger, long entry, int partition,
                                                            long epoch) {
        for (boolean copy : new boolean[] {true, false}) {
            ByteBuf payload = Unpooled.wrappedBuffer("metadata and payload".getBytes(StandardCharsets.UTF_8));
            MessageFrames frames = new MessageFrames(alloc, 1, partition, copy ? MessageFrames.COPY_BUDGET : 0);
            frames.add(consumerId, PositionImpl.get(ledger, entry), epoch, payload);
            ByteBuf ours = frames.finish();
            frames.release();
            try {
                assertEquals(ByteBufUtil.hexDump(ours),
                        stockFrame(consumerId, ledger, entry, partition, epoch, payload), "copy=" + copy);
                assertTrue(ours.readableBytes() - payload.readableBytes() <= MessageFrames.MAX_HEADER_BYTES,
                        "header within the bound");
                assertEquals(payload.refCnt(), copy ? 1 : 2, "a shared frame holds a reference, a copied one not");
            } finally {
                ours.release();
                assertEquals(payload.refCnt(), 1, "the entry's reference is given back with the frames");
                payload.release();
            }
        }
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void smallEntriesMakeOneBufferAndLargeOnesAreSharedNotCopied() {
        ByteBuf small = Unpooled.directBuffer(1024).writeZero(1024);
        ByteBuf large = Unpooled.directBuffer(MessageFrames.COPY_LIMIT + 1).writeZero(MessageFrames.COPY_LIMIT + 1);
        MessageFrames frames = new MessageFrames(alloc, 100, -1, MessageFrames.COPY_BUDGET);
        StringBuilder expected = new StringBuilder();
        for (int c = 0; c < 100; c++) {
            frames.add(c, PositionImpl.get(3, 4), 0, small);
            expected.append(stockFrame(c, 3, 4, -1, 0, small));
        }
        ByteBuf ours = frames.finish();
        assertFalse(ours instanceof CompositeByteBuf, "100 frames of 1 KB are one buffer");
        assertEquals(ours.nioBufferCount(), 1);
        assertEquals(ByteBufUtil.hexDump(ours), expected.toString());
        assertEquals(small.refCnt(), 1, "copied, no reference kept");
        ours.release();

        frames = new MessageFrames(alloc, 3, -1, MessageFrames.COPY_BUDGET);
        frames.add(1, PositionImpl.get(3, 4), 0, small);
        frames.add(1, PositionImpl.get(3, 5), 0, large);
        frames.add(2, PositionImpl.get(3, 4), 0, small);
        ours = frames.finish();
        assertEquals(large.refCnt(), 2, "the large entry is shared");
        assertEquals(ByteBufUtil.hexDump(ours), stockFrame(1, 3, 4, -1, 0, small) + stockFrame(1, 3, 5, -1, 0, large)
                + stockFrame(2, 3, 4, -1, 0, small));
        ours.release();
        assertEquals(large.refCnt(), 1);
        small.release();
        large.release();
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void aConnectionThatIsNotWritableGetsSharedFramesOnly() {
        ByteBuf small = Unpooled.directBuffer(100).writeZero(100);
        MessageFrames frames = new MessageFrames(alloc, 10, -1, 0);
        StringBuilder expected = new StringBuilder();
        for (int c = 0; c < 10; c++) {
            frames.add(c, PositionImpl.get(1, c), 0, small);
            expected.append(stockFrame(c, 1, c, -1, 0, small));
        }
        CompositeByteBuf ours = (CompositeByteBuf) frames.finish();
        assertEquals(small.refCnt(), 11, "every frame refers to the entry instead of copying it");
        assertEquals(ByteBufUtil.hexDump(ours), expected.toString());
        Set<ByteBuf> headerBuffers = Collections.newSetFromMap(new IdentityHashMap<>());
        for (int i = 0; i < ours.numComponents(); i += 2) {
            headerBuffers.add(ours.internalComponent(i).unwrap());
        }
        assertEquals(headerBuffers.size(), 1, "the ten headers are slices of one buffer, not a buffer each");
        assertEquals(ours.numComponents(), 20, "a header slice and the shared entry per frame, nothing consolidated");
        ours.release();
        assertEquals(small.refCnt(), 1);
        small.release();
    }

    @Test(groups = "unit", timeOut = 30_000)
    public void aLargePassSpreadsOverBuffersOfBoundedSize() {
        ByteBuf entry = Unpooled.directBuffer(1000).writeZero(1000);
        int n = MessageFrames.BUFFER_BYTES / 1000 * 3 + 7;
        MessageFrames frames = new MessageFrames(alloc, n, -1, MessageFrames.COPY_BUDGET);
        for (int i = 0; i < n; i++) {
            frames.add(i, PositionImpl.get(1, i), i, entry);
        }
        CompositeByteBuf ours = (CompositeByteBuf) frames.finish();
        assertTrue(ours.numComponents() >= 3, "a pass of " + n + " frames uses several buffers");
        for (int i = 0; i < ours.numComponents(); i++) {
            assertTrue(ours.internalComponent(i).capacity() <= MessageFrames.BUFFER_BYTES,
                    "no buffer grows with the pass: " + ours.internalComponent(i).capacity());
        }
        ByteBuf read = ours.duplicate();
        for (int i = 0; i < n; i++) {
            String stock = stockFrame(i, 1, i, -1, i, entry);
            assertEquals(ByteBufUtil.hexDump(read.readSlice(stock.length() / 2)), stock, "frame " + i);
        }
        assertFalse(read.isReadable());
        ours.release();
        assertEquals(ours.refCnt(), 0);
        entry.release();
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void consecutiveFramesDoNotCarryFieldsOver() {
        ByteBuf payload = Unpooled.wrappedBuffer(new byte[100]);
        MessageFrames frames = new MessageFrames(alloc, 2, 5, MessageFrames.COPY_BUDGET);
        // The command object is reused: an epoch set for the first message must not leak into the second.
        frames.add(1, PositionImpl.get(2, 3), 9, payload);
        frames.add(4, PositionImpl.get(5, 6), Commands.DEFAULT_CONSUMER_EPOCH, payload);
        ByteBuf ours = frames.finish();
        try {
            assertEquals(ByteBufUtil.hexDump(ours), stockFrame(1, 2, 3, 5, 9, payload)
                    + stockFrame(4, 5, 6, 5, Commands.DEFAULT_CONSUMER_EPOCH, payload));
        } finally {
            ours.release();
            payload.release();
        }
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void releaseWithoutFinishGivesEverythingBack() {
        ByteBuf large = Unpooled.directBuffer(MessageFrames.COPY_LIMIT + 1).writeZero(MessageFrames.COPY_LIMIT + 1);
        MessageFrames frames = new MessageFrames(alloc, 3, -1, MessageFrames.COPY_BUDGET);
        frames.add(1, PositionImpl.get(1, 1), 0, large);
        frames.add(2, PositionImpl.get(1, 1), 0, large);
        assertEquals(large.refCnt(), 3);
        frames.release(); // a failure on the way: nothing was handed over
        assertEquals(large.refCnt(), 1, "the shared references are given back");
        assertNull(frames.finish(), "nothing left to hand over after a release");
        large.release();
        assertNull(new MessageFrames(alloc, 0, -1, MessageFrames.COPY_BUDGET).finish(),
                "a pass without frames writes nothing");
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void anEntryOfExactlyTheLimitIsCopiedAndOneByteMoreIsShared() {
        ByteBuf atLimit = Unpooled.directBuffer(MessageFrames.COPY_LIMIT).writeZero(MessageFrames.COPY_LIMIT);
        ByteBuf over = Unpooled.directBuffer(MessageFrames.COPY_LIMIT + 1).writeZero(MessageFrames.COPY_LIMIT + 1);
        MessageFrames frames = new MessageFrames(alloc, 2, -1, MessageFrames.COPY_BUDGET);
        frames.add(1, PositionImpl.get(1, 1), 0, atLimit);
        frames.add(1, PositionImpl.get(1, 2), 0, over);
        ByteBuf ours = frames.finish();
        assertEquals(atLimit.refCnt(), 1, "copied");
        assertEquals(over.refCnt(), 2, "shared");
        assertEquals(ByteBufUtil.hexDump(ours), stockFrame(1, 1, 1, -1, 0, atLimit) + stockFrame(1, 1, 2, -1, 0, over));
        ours.release();
        atLimit.release();
        over.release();
    }

    @Test(groups = "unit", timeOut = 30_000)
    public void aPassCopiesAtMostItsBudgetAndSharesTheRest() {
        ByteBuf entry = Unpooled.directBuffer(1000).writeZero(1000);
        int n = MessageFrames.COPY_BUDGET / 1000 * 4; // a large catch-up: four budgets' worth of entries
        MessageFrames frames = new MessageFrames(alloc, n, -1, MessageFrames.COPY_BUDGET);
        StringBuilder expected = new StringBuilder();
        for (int i = 0; i < n; i++) {
            frames.add(i, PositionImpl.get(1, i), 0, entry);
            expected.append(stockFrame(i, 1, i, -1, 0, entry));
        }
        ByteBuf ours = frames.finish();
        int copied = MessageFrames.COPY_BUDGET / 1000;
        assertEquals(entry.refCnt(), 1 + n - copied, "the first " + copied + " entries copied, the rest shared");
        assertEquals(ByteBufUtil.hexDump(ours), expected.toString());
        long allocated = alloc.made.stream().mapToLong(ByteBuf::capacity).sum();
        assertTrue(allocated < MessageFrames.COPY_BUDGET + (long) n * MessageFrames.MAX_HEADER_BYTES
                + MessageFrames.BUFFER_BYTES, "memory of the pass bounded by the budget: " + allocated);
        ours.release();
        assertEquals(entry.refCnt(), 1);
        entry.release();
    }

    @Test(groups = "unit", timeOut = 30_000)
    public void aTailPassIsCopiedWholeWhateverTheConsumersPerConnection() {
        assertEquals(MessageFrames.copyBudget(1), MessageFrames.COPY_BUDGET, "the smallest budget");
        assertEquals(MessageFrames.copyBudget(5_000), 5_000 * MessageFrames.COPY_PER_CONSUMER);
        assertEquals(MessageFrames.copyBudget(Integer.MAX_VALUE), Integer.MAX_VALUE, "no overflow");
        ByteBuf entry = Unpooled.directBuffer(1024).writeZero(1024);
        int consumers = 5_000; // a gateway's connection: one entry to each of its consumers
        MessageFrames frames = new MessageFrames(alloc, consumers, -1, MessageFrames.copyBudget(consumers));
        long expectedBytes = 0;
        for (int c = 0; c < consumers; c++) {
            frames.add(c, PositionImpl.get(7, 8), 0, entry);
            expectedBytes += stockFrame(c, 7, 8, -1, 0, entry).length() / 2;
        }
        ByteBuf ours = frames.finish();
        assertEquals(entry.refCnt(), 1, "every frame copied, none shared");
        assertEquals(ours.readableBytes(), expectedBytes);
        String last = stockFrame(consumers - 1, 7, 8, -1, 0, entry);
        assertEquals(ByteBufUtil.hexDump(ours, ours.writerIndex() - last.length() / 2, last.length() / 2), last);
        ours.release();
        entry.release();
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void aFailureHalfwayLosesNothingAfterRelease() {
        ByteBuf good = Unpooled.directBuffer(100).writeZero(100);
        ByteBuf large = Unpooled.directBuffer(MessageFrames.COPY_LIMIT + 1).writeZero(MessageFrames.COPY_LIMIT + 1);
        ByteBuf freed = Unpooled.directBuffer(100).writeZero(100);
        freed.release(); // an entry released by mistake: copying it throws
        MessageFrames frames = new MessageFrames(alloc, 4, -1, MessageFrames.COPY_BUDGET);
        frames.add(1, PositionImpl.get(1, 1), 0, good);
        frames.add(2, PositionImpl.get(1, 2), 0, large);
        frames.add(3, PositionImpl.get(1, 1), 0, good);
        try {
            frames.add(4, PositionImpl.get(1, 3), 0, freed);
            throw new AssertionError("copying a released entry must fail");
        } catch (IllegalReferenceCountException expected) {
            // as ConnectionSend's finally does
        }
        frames.release();
        assertEquals(large.refCnt(), 1, "the shared reference given back");
        good.release();
        large.release();
        // every buffer the frames allocated is checked as freed after the test
    }

    /** Stock Pulsar's frame for one message, header and entry, as hex. */
    private static String stockFrame(long consumerId, long ledger, long entry, int partition, long epoch,
                                     ByteBuf payload) {
        BaseCommand command = Commands.newMessageCommand(consumerId, ledger, entry, partition, 0, null, epoch);
        ByteBufPair stock = Commands.serializeCommandMessageWithSize(command, payload.retainedDuplicate());
        try {
            return ByteBufUtil.hexDump(stock.getFirst()) + ByteBufUtil.hexDump(stock.getSecond());
        } finally {
            stock.release();
        }
    }
}
