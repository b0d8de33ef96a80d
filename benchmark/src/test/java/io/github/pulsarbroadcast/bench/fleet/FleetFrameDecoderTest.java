package io.github.pulsarbroadcast.bench.fleet;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import java.lang.reflect.Method;
import org.testng.annotations.Test;

/**
 * The fleet's frame decoder ({@link FleetEngine#frameDecoder()}) under a pass of socket reads that end inside frames,
 * as when the fleet falls behind and one pass reads many times (experiment F8 in docs/benchmarks.md): every frame
 * comes out whole and in order to a handler that releases each before the next (as the fleet's does), and the
 * decoder's buffer stays about two reads in size. With Netty's default (the bytes already read discarded every 16th
 * read) the buffer grows past 16 reads (to 2 MiB in this test) and the test fails.
 */
public class FleetFrameDecoderTest {

    private static final int READ = 64 * 1024;
    private static final int READS_IN_A_PASS = 32;
    private static final int FRAME_BODY = 1_100;

    @Test(groups = "unit", timeOut = 30_000)
    public void aPassOfReadsEndingInsideFramesKeepsTheBufferSmall() throws Exception {
        LengthFieldBasedFrameDecoder decoder = FleetEngine.frameDecoder();
        FrameCheck check = new FrameCheck();
        EmbeddedChannel channel = new EmbeddedChannel(decoder, check);
        ByteBuf stream = Unpooled.buffer(READ * READS_IN_A_PASS);
        int frames = 0;
        while (stream.writableBytes() >= 4 + FRAME_BODY) {
            stream.writeInt(FRAME_BODY);
            for (int i = 0; i < FRAME_BODY / 4; i++) {
                stream.writeInt(frames);
            }
            frames++;
        }
        stream.writeInt(FRAME_BODY).writeZero(stream.writableBytes()); // ends inside a frame: the buffer stays
        Object[] reads = new Object[READS_IN_A_PASS];
        for (int i = 0; i < READS_IN_A_PASS; i++) {
            ByteBuf read = Unpooled.buffer(READ); // as a socket read: its own buffer, one read long
            read.writeBytes(stream, READ);
            reads[i] = read;
        }
        stream.release();
        try {
            channel.writeInbound(reads); // one pass: every read, then one read-complete
            int capacity = internalBuffer(decoder).capacity();
            assertTrue(capacity <= 4 * READ, "the decoder's buffer grew to " + capacity + " bytes in one pass of "
                    + READS_IN_A_PASS + " reads of " + READ + " (at most " + 4 * READ + " expected)");
            assertEquals(check.problem, null);
            assertEquals(check.frames, frames, "every complete frame came out");
        } finally {
            assertFalse(channel.finishAndReleaseAll(), "nothing left over");
        }
    }

    /** As the fleet's handler does: takes each frame as it comes and releases it before the next. */
    private static final class FrameCheck extends ChannelInboundHandlerAdapter {
        int frames;
        String problem;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf frame = (ByteBuf) msg;
            try {
                if (problem == null && (frame.readableBytes() != FRAME_BODY || frame.getInt(0) != frames
                        || frame.getInt(FRAME_BODY - 4) != frames)) {
                    problem = "frame " + frames + " is not whole or not in order: " + frame.readableBytes()
                            + " bytes, first int " + frame.getInt(0);
                }
                frames++;
            } finally {
                frame.release();
            }
        }
    }

    private static ByteBuf internalBuffer(ByteToMessageDecoder decoder) throws Exception {
        Method m = ByteToMessageDecoder.class.getDeclaredMethod("internalBuffer");
        m.setAccessible(true);
        return (ByteBuf) m.invoke(decoder);
    }
}
