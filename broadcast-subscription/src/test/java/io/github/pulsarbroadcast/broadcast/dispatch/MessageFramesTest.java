package io.github.pulsarbroadcast.broadcast.dispatch;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
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
import org.testng.annotations.DataProvider;
import org.testng.annotations.Test;

/**
 * Contract: the frames {@link MessageFrames} writes are byte for byte what stock Pulsar writes for the same message
 * ({@code Commands.newMessageCommand} + {@code serializeCommandMessageWithSize}), so that every client reads them as
 * it reads stock messages, and every reference they take is given back.
 */
public class MessageFramesTest {

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
    public void headerIsWhatStockPulsarWrites(long consumerId, long ledger, long entry, int partition, long epoch) {
        ByteBuf payload = Unpooled.wrappedBuffer("metadata and payload".getBytes(StandardCharsets.UTF_8));
        MessageFrames frames = new MessageFrames(1, partition);
        ByteBuf ours = frames.header(consumerId, PositionImpl.get(ledger, entry), epoch, payload.readableBytes());
        ByteBuf headers = ours.unwrap();
        frames.release();
        BaseCommand command = Commands.newMessageCommand(consumerId, ledger, entry, partition, 0, null, epoch);
        ByteBufPair stock = Commands.serializeCommandMessageWithSize(command, payload.retainedDuplicate());
        try {
            assertEquals(ByteBufUtil.hexDump(ours), ByteBufUtil.hexDump(stock.getFirst()));
            assertTrue(ours.readableBytes() <= MessageFrames.MAX_HEADER_BYTES, "within the bound");
        } finally {
            ours.release();
            assertEquals(headers.refCnt(), 0, "the headers' buffer is freed with the last header");
            stock.release();
            payload.release();
        }
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void aLargePassSpreadsOverBuffersAndFreesThemAll() {
        int n = MessageFrames.HEADERS_PER_BUFFER * 5 + 7;
        MessageFrames frames = new MessageFrames(n, -1);
        List<ByteBuf> written = new ArrayList<>();
        Set<ByteBuf> buffers = Collections.newSetFromMap(new IdentityHashMap<>());
        for (int i = 0; i < n; i++) {
            ByteBuf header = frames.header(i, PositionImpl.get(1, i), i, 10);
            written.add(header);
            buffers.add(header.unwrap());
        }
        frames.release();
        assertTrue(buffers.size() >= 2, "a pass of " + n + " headers uses more than one buffer");
        for (ByteBuf b : buffers) {
            assertTrue(b.capacity() <= MessageFrames.HEADERS_PER_BUFFER * MessageFrames.MAX_HEADER_BYTES,
                    "no buffer grows with the pass: " + b.capacity());
        }
        for (int i = 0; i < n; i += 997) {
            ByteBufPair stock = Commands.serializeCommandMessageWithSize(
                    Commands.newMessageCommand(i, 1, i, -1, 0, null, i), Unpooled.wrappedBuffer(new byte[10]));
            assertEquals(ByteBufUtil.hexDump(written.get(i)), ByteBufUtil.hexDump(stock.getFirst()), "header " + i);
            stock.release();
        }
        written.forEach(ByteBuf::release);
        for (ByteBuf b : buffers) {
            assertEquals(b.refCnt(), 0, "every buffer freed once its headers are released");
        }
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void consecutiveHeadersDoNotCarryFieldsOver() {
        ByteBuf payload = Unpooled.wrappedBuffer(new byte[100]);
        MessageFrames frames = new MessageFrames(2, 5);
        // The command object is reused: an epoch set for the first message must not leak into the second.
        ByteBuf first = frames.header(1, PositionImpl.get(2, 3), 9, payload.readableBytes());
        ByteBuf second = frames.header(4, PositionImpl.get(5, 6), Commands.DEFAULT_CONSUMER_EPOCH, 1);
        ByteBuf headers = second.unwrap();
        frames.release();
        ByteBufPair stock = Commands.serializeCommandMessageWithSize(
                Commands.newMessageCommand(4, 5, 6, 5, 0, null, Commands.DEFAULT_CONSUMER_EPOCH),
                Unpooled.wrappedBuffer(new byte[1]));
        try {
            assertEquals(ByteBufUtil.hexDump(second), ByteBufUtil.hexDump(stock.getFirst()));
        } finally {
            first.release();
            assertEquals(headers.refCnt(), 1, "the second header still holds the buffer");
            second.release();
            assertEquals(headers.refCnt(), 0, "freed once both headers are released");
            stock.release();
            payload.release();
        }
    }
}
