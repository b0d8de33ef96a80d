package io.github.pulsarbroadcast.broadcast.cnx;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertSame;
import static org.testng.Assert.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.common.api.proto.BaseCommand;
import org.testng.annotations.Test;

/**
 * The contract of {@link LivenessProbe} on Netty's embedded channel (virtual time): a frame answers "alive"; a ping
 * that left and got no answer within the timeout answers "dead" and closes the connection; a connection it cannot
 * judge (reading paused, no pings, the ping still queued behind earlier writes) is "alive" and stays open; a closed
 * connection is "dead"; concurrent probes share one ping.
 *
 * <p>Threading: the test thread, which is also the embedded channel's event loop.
 */
public class LivenessProbeTest {

    private static final long TIMEOUT_MS = 5_000;

    /** A channel whose last handler stands for the connection handler the probe writes from. */
    private static final class Connection {
        final EmbeddedChannel channel = new EmbeddedChannel();
        final ChannelHandlerContext ctx;
        final LivenessProbe probe = new LivenessProbe();

        Connection() {
            channel.pipeline().addLast("cnx", new ChannelInboundHandlerAdapter());
            ctx = channel.pipeline().context("cnx");
        }

        CompletableFuture<Boolean> probe() {
            CompletableFuture<Boolean> answer = probe.probe(ctx, true, TIMEOUT_MS);
            channel.runPendingTasks();
            return answer;
        }

        void after(long millis) {
            channel.advanceTimeBy(millis, TimeUnit.MILLISECONDS);
            channel.runScheduledPendingTasks();
            channel.runPendingTasks();
        }

        /** The pings written so far (released). */
        int pingsWritten() {
            int pings = 0;
            for (Object out; (out = channel.readOutbound()) != null; ) {
                ByteBuf frame = (ByteBuf) out;
                BaseCommand cmd = new BaseCommand();
                int size = frame.getInt(4);
                cmd.parseFrom(frame.slice(8, size), size);
                assertEquals(cmd.getType(), BaseCommand.Type.PING);
                pings++;
                frame.release();
            }
            return pings;
        }

        void close() {
            channel.finishAndReleaseAll();
        }
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void aFrameFromTheClientAnswersAlive() {
        Connection c = new Connection();
        CompletableFuture<Boolean> answer = c.probe();
        assertEquals(c.pingsWritten(), 1);
        assertFalse(answer.isDone());
        c.probe.frameRead();
        assertTrue(answer.join());
        c.after(TIMEOUT_MS);
        assertTrue(c.channel.isOpen(), "an answered probe closes nothing later");
        c.close();
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void noAnswerWithinTheTimeoutIsDeadAndClosesTheConnection() {
        Connection c = new Connection();
        CompletableFuture<Boolean> answer = c.probe();
        c.after(TIMEOUT_MS - 1);
        assertFalse(answer.isDone());
        c.after(1);
        assertFalse(answer.join());
        assertFalse(c.channel.isOpen());
        assertEquals(c.pingsWritten(), 1);
        c.close();
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void concurrentProbesShareOnePing() {
        Connection c = new Connection();
        CompletableFuture<Boolean> first = c.probe();
        CompletableFuture<Boolean> second = c.probe();
        assertEquals(c.pingsWritten(), 1);
        c.probe.frameRead();
        assertTrue(first.join());
        assertTrue(second.join());
        c.close();
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void aConnectionThatClosesIsDead() {
        Connection c = new Connection();
        CompletableFuture<Boolean> answer = c.probe();
        c.channel.close();
        c.channel.runPendingTasks();
        assertFalse(answer.join());
        assertFalse(c.probe().join(), "and a closed one is dead at once");
        c.close();
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void aConnectionWhoseReadingIsPausedIsNotJudged() {
        Connection c = new Connection();
        c.channel.config().setAutoRead(false);
        assertTrue(c.probe().join());
        assertEquals(c.pingsWritten(), 0, "no ping: its answer could not be read");
        assertTrue(c.channel.isOpen());
        c.close();
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void aClientWithoutPingsIsNotJudged() {
        Connection c = new Connection();
        CompletableFuture<Boolean> answer = c.probe.probe(c.ctx, false, TIMEOUT_MS);
        c.channel.runPendingTasks();
        assertTrue(answer.join());
        assertEquals(c.pingsWritten(), 0);
        c.close();
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void aPingStillQueuedBehindEarlierWritesAtTheTimeoutIsNotJudged() {
        Connection c = new Connection();
        List<Object> held = new ArrayList<>();
        // A slow link: writes are taken but never reach the socket (their promises stay open).
        c.channel.pipeline().addFirst(new ChannelOutboundHandlerAdapter() {
            @Override
            public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
                held.add(msg);
            }
        });
        CompletableFuture<Boolean> answer = c.probe();
        c.after(TIMEOUT_MS);
        assertTrue(answer.join());
        assertTrue(c.channel.isOpen(), "a slow connection is left to the keep-alive");
        assertEquals(held.size(), 1);
        held.forEach(ReferenceCountUtil::release);
        c.close();
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void aNewProbeAfterAnAnswerPingsAgain() {
        Connection c = new Connection();
        CompletableFuture<Boolean> first = c.probe();
        c.probe.frameRead();
        CompletableFuture<Boolean> second = c.probe();
        assertSame(first.join(), Boolean.TRUE);
        assertFalse(second.isDone());
        assertEquals(c.pingsWritten(), 2);
        c.close();
    }
}
