package io.github.pulsarbroadcast.broadcast.dispatch;

import static org.testng.Assert.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
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
            assertEquals(ours.readableBytes() <= MessageFrames.MAX_HEADER_BYTES, true, "within the bound");
        } finally {
            ours.release();
            assertEquals(headers.refCnt(), 0, "the headers' buffer is freed with the last header");
            stock.release();
            payload.release();
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
