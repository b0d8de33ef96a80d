package io.github.pulsarbroadcast.bench.fleet;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertNull;
import static org.testng.Assert.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.util.Collections;
import java.util.Random;
import org.apache.pulsar.common.api.proto.CommandAck.AckType;
import org.apache.pulsar.common.protocol.Commands;
import org.testng.annotations.Test;

/**
 * {@link CommandBatch}'s contract: what it gathers is byte for byte what {@code Commands.newAck} and
 * {@code Commands.newFlow} make, one after the other, in the order the commands were made (random ids, types and
 * sizes; the seed is printed).
 */
public class CommandBatchTest {

    @Test(groups = "unit", timeOut = 30_000)
    public void gatheredCommandsAreTheBytesOfOneCommandEach() {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        CommandBatch batch = new CommandBatch(PooledByteBufAllocator.DEFAULT, CommandBatch.ONE_COMMAND_CAPACITY);
        for (int round = 0; round < 50; round++) {
            ByteBuf expected = Unpooled.buffer();
            int commands = 1 + rnd.nextInt(5_000);
            for (int i = 0; i < commands; i++) {
                long consumerId = rnd.nextInt(3) == 0 ? rnd.nextLong() & Long.MAX_VALUE : rnd.nextInt(100_000);
                ByteBuf one;
                if (rnd.nextInt(5) == 0) {
                    int permits = 1 + rnd.nextInt(Integer.MAX_VALUE - 1);
                    batch.flow(consumerId, permits);
                    one = Commands.newFlow(consumerId, permits);
                } else {
                    long ledger = rnd.nextLong() & Long.MAX_VALUE;
                    long entry = rnd.nextInt(1_000_000);
                    boolean cumulative = rnd.nextBoolean();
                    batch.ack(consumerId, ledger, entry, cumulative);
                    one = Commands.newAck(consumerId, ledger, entry, null,
                            cumulative ? AckType.Cumulative : AckType.Individual, null, Collections.emptyMap(), -1);
                }
                expected.writeBytes(one);
                one.release();
            }
            ByteBuf gathered = batch.take();
            try {
                assertTrue(ByteBufUtil.equals(gathered, expected), "seed " + seed + ", round " + round + ": "
                        + commands + " commands differ");
            } finally {
                gathered.release();
            }
            assertTrue(batch.isEmpty());
            assertNull(batch.take(), "taken means empty");
        }
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void discardReleasesWhatWasGathered() {
        CommandBatch batch = new CommandBatch(PooledByteBufAllocator.DEFAULT, CommandBatch.READ_BATCH_CAPACITY);
        batch.ack(1, 2, 3, false);
        ByteBuf gathered = batch.take();
        assertEquals(gathered.refCnt(), 1);
        gathered.release();
        batch.flow(1, 10);
        batch.discard();
        assertTrue(batch.isEmpty());
    }
}
