package io.github.pulsarbroadcast.broadcast.dispatch;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;

import io.github.pulsarbroadcast.broadcast.WindowBudget;
import java.util.ArrayList;
import java.util.List;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.testng.annotations.Test;

/**
 * {@link RefillBatches}: a consumer behind the tail with at most half of its receiver queue in permits waits for its
 * next refill (or for its hold to end) and is then served in one pass; at the tail, or with the hold off, it is served
 * at once. Runs the real dispatch core in the model test's world (in-memory ledger, virtual clock).
 */
@Test(groups = "unit")
public class RefillBatchesTest {

    private static final int QUEUE = 10;

    /**
     * The dispatch core with two consumers: one that received ten entries at the tail and has no permits left, and
     * one with plenty that keeps the tail reads going (so that the first falls behind them).
     */
    private static final class World implements ModelHarness.Deliveries {
        final ModelHarness loop = new ModelHarness();
        final ModelLedger ledger = new ModelLedger(3, 1_000);
        final SubscriptionEngine engine;
        final BroadcastConsumer consumer;
        final BroadcastConsumer keeper;
        final List<PositionImpl> received = new ArrayList<>();

        World(int waitMs) throws Exception {
            engine = new SubscriptionEngine("persistent://t/ns/topic", "fleet", -1, ledger,
                    ModelHarness.config(100, 100, 0, 1_000, 0, waitMs), WindowBudget.unlimited(), loop,
                    () -> loop.nowNanos, new SubscriptionStart(new ModelPositionStore(), null, false));
            consumer = engine.join(1, "car-1", new ModelHarness.Connection(this), InitialPosition.Latest, 0);
            engine.flow(consumer, QUEUE);
            keeper = engine.join(2, "car-2", new ModelHarness.Connection(this), InitialPosition.Latest, 0);
            engine.flow(keeper, 100_000);
            settle();
            publish(QUEUE);
            assertEquals(received.size(), QUEUE, "served at the tail");
        }

        void publish(int entries) {
            for (int i = 0; i < entries; i++) {
                ledger.publish(false);
            }
            settle();
        }

        void settle() {
            while (loop.runOne() || ledger.completeOne()) {
                // run everything that is ready
            }
        }

        /** Advances the virtual clock one millisecond at a time, running what falls due. */
        void advance(long ms) {
            for (long i = 0; i < ms; i++) {
                loop.advance(1);
                settle();
            }
        }

        long sends() {
            return engine.counters().connectionSends();
        }

        @Override
        public void delivered(BroadcastConsumer c, WindowEntry entry, long epoch) {
            if (c == consumer) {
                received.add(entry.position);
            }
        }

        @Override
        public void endOfTopic(long consumerId) {
        }

        void close() {
            engine.close();
            engine.leave(consumer);
            engine.leave(keeper);
            engine.closeFanOut();
            settle();
            assertTrue(ledger.unreleased().isEmpty(), ledger.unreleased().size() + " buffers not released");
        }
    }

    @Test(timeOut = 30_000)
    public void behindTheTailAHalfRefillWaitsForTheNextAndBothAreServedInOnePass() throws Exception {
        World w = new World(50);
        w.publish(20); // the consumer has no permits: it falls 20 behind
        long sends = w.sends();
        w.engine.flow(w.consumer, QUEUE / 2);
        w.settle();
        assertEquals(w.received.size(), QUEUE, "half a queue of permits behind the tail: held");
        assertEquals(w.engine.counters().refillsHeld(), 1);
        w.engine.flow(w.consumer, QUEUE / 2);
        w.settle();
        assertEquals(w.received.size(), 2 * QUEUE, "the second refill releases it: ten more");
        assertEquals(w.sends() - sends, 1, "in one send");
        assertInOrder(w.received);
        w.close();
    }

    @Test(timeOut = 30_000)
    public void aHeldConsumerIsServedWhenItsHoldEndsWithinTwoPeriods() throws Exception {
        World w = new World(50);
        w.publish(20);
        w.engine.flow(w.consumer, QUEUE / 2);
        w.settle();
        w.advance(49);
        assertEquals(w.received.size(), QUEUE, "still held before one period");
        w.advance(51);
        assertEquals(w.received.size(), QUEUE + QUEUE / 2, "served on its half refill after at most two periods");
        assertInOrder(w.received);
        w.close();
    }

    @Test(timeOut = 30_000)
    public void withTheHoldOffAHalfRefillIsServedAtOnce() throws Exception {
        World w = new World(0);
        w.publish(20);
        w.engine.flow(w.consumer, QUEUE / 2);
        w.settle();
        assertEquals(w.received.size(), QUEUE + QUEUE / 2);
        assertEquals(w.engine.counters().refillsHeld(), 0);
        w.close();
    }

    @Test(timeOut = 30_000)
    public void atTheTailAHalfRefillIsNeverHeld() throws Exception {
        World w = new World(50);
        w.engine.flow(w.consumer, QUEUE / 2);
        w.settle();
        w.publish(3);
        assertEquals(w.received.size(), QUEUE + 3, "at the tail: served by the tail read at once");
        assertEquals(w.engine.counters().refillsHeld(), 0);
        w.close();
    }

    @Test(timeOut = 30_000)
    public void aConsumerThatLeavesWhileHeldIsNotServed() throws Exception {
        World w = new World(50);
        w.publish(20);
        w.engine.flow(w.consumer, QUEUE / 2);
        w.settle();
        w.engine.leave(w.consumer);
        w.advance(200);
        assertEquals(w.received.size(), QUEUE);
        w.engine.close();
        w.engine.leave(w.keeper);
        w.engine.closeFanOut();
        w.settle();
        assertTrue(w.ledger.unreleased().isEmpty());
    }

    private static void assertInOrder(List<PositionImpl> received) {
        for (int i = 1; i < received.size(); i++) {
            assertTrue(received.get(i - 1).compareTo(received.get(i)) < 0, "out of order at " + i + ": " + received);
        }
    }
}
