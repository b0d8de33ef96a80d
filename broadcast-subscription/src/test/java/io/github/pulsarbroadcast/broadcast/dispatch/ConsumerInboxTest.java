package io.github.pulsarbroadcast.broadcast.dispatch;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertTrue;

import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.testng.annotations.Test;

/**
 * The contract of {@link ConsumerInbox}: one queued task per consumer whatever is offered, nothing lost, order kept
 * around a redelivery; and the engine's use of it: a flood of flow and redeliver commands queues one dispatch task.
 */
public class ConsumerInboxTest {

    /** Regression (issue 10, "memory under overload"): each flow and redelivery used to queue a task of its own. */
    @Test(groups = "unit", timeOut = 30_000)
    public void aFloodOfFlowsAndRedeliveriesQueuesOneDispatchTask() throws Exception {
        ModelHarness world = new ModelHarness();
        SubscriptionEngine engine = world.newEngine("persistent://t/ns/flood");
        ModelHarness.Connection cnx = ModelHarness.discarding();
        BroadcastConsumer bc = engine.join(1, "car-1", cnx, InitialPosition.Latest, 0);
        while (world.runOne()) {
            // the join
        }
        int before = world.queued();
        for (int i = 0; i < 10_000; i++) {
            engine.flow(bc, 1);
            if (i % 100 == 0) {
                engine.redeliver(bc, i / 100);
            }
        }
        assertEquals(world.queued() - before, 1, "tasks queued by 10,000 flows and 100 redeliveries");
        while (world.runOne()) {
            // the inbox's task
        }
        assertEquals(bc.cursor.sending.permits(), 10_000, "every permit applied, once");
        assertEquals(bc.epoch, 99, "the highest epoch asked for");
        engine.flow(bc, 7);
        assertEquals(world.queued(), 1, "a flow after the task ran queues a task again");
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void permitsOfferedBeforeAndAfterARedeliveryKeepTheirSide() {
        ConsumerInbox inbox = new ConsumerInbox();
        ConsumerInbox.Taken taken = new ConsumerInbox.Taken();
        assertTrue(inbox.offerPermits(5));
        assertFalse(inbox.offerRedelivery(4));
        assertFalse(inbox.offerPermits(3));
        assertFalse(inbox.offerRedelivery(2));
        assertFalse(inbox.offerPermits(2));
        inbox.takeInto(taken);
        assertEquals(taken.permitsBefore, 5);
        assertTrue(taken.redeliver);
        assertEquals(taken.redeliverEpoch, 4);
        assertEquals(taken.permitsAfter, 5);
        inbox.takeInto(taken);
        assertEquals(taken.permitsBefore, 0);
        assertFalse(taken.redeliver);
        assertEquals(taken.permitsAfter, 0);
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void permitsSaturate() {
        ConsumerInbox inbox = new ConsumerInbox();
        ConsumerInbox.Taken taken = new ConsumerInbox.Taken();
        for (int i = 0; i < 3; i++) {
            inbox.offerPermits(Integer.MAX_VALUE);
        }
        inbox.takeInto(taken);
        assertEquals(taken.permitsBefore, Integer.MAX_VALUE);
    }

    /**
     * Random offers and takes against a reference: every permit taken once, on the side of the first redelivery it
     * was offered on, the highest epoch, and exactly one "queue a task" answer between two takes that had offers.
     */
    @Test(groups = "unit", timeOut = 30_000)
    public void randomSchedulesMatchTheReference() {
        long seed = Long.getLong("broadcast.inbox.seed", System.nanoTime());
        Random rnd = new Random(seed);
        ConsumerInbox inbox = new ConsumerInbox();
        ConsumerInbox.Taken taken = new ConsumerInbox.Taken();
        for (int round = 0; round < 2_000; round++) {
            long before = 0;
            long after = 0;
            boolean redeliver = false;
            long epoch = Long.MIN_VALUE;
            int queueAnswers = 0;
            int offers = rnd.nextInt(6);
            for (int i = 0; i < offers; i++) {
                if (rnd.nextInt(4) == 0) {
                    long e = rnd.nextInt(10);
                    queueAnswers += inbox.offerRedelivery(e) ? 1 : 0;
                    redeliver = true;
                    epoch = Math.max(epoch, e);
                } else {
                    int p = 1 + rnd.nextInt(1000);
                    queueAnswers += inbox.offerPermits(p) ? 1 : 0;
                    if (redeliver) {
                        after += p;
                    } else {
                        before += p;
                    }
                }
            }
            String at = "seed " + seed + " (-Dbroadcast.inbox.seed=" + seed + "), round " + round;
            assertEquals(queueAnswers, offers == 0 ? 0 : 1, at + ": tasks asked for");
            inbox.takeInto(taken);
            assertEquals(taken.permitsBefore, before, at);
            assertEquals(taken.redeliver, redeliver, at);
            if (redeliver) {
                assertEquals(taken.redeliverEpoch, epoch, at);
            }
            assertEquals(taken.permitsAfter, after, at);
        }
    }

    /** Threads offering while another takes: at most one task queued at any time, every permit taken once. */
    @Test(groups = "unit", timeOut = 60_000)
    public void concurrentOffersQueueAtMostOneTaskAndLoseNoPermit() throws Exception {
        ConsumerInbox inbox = new ConsumerInbox();
        ConcurrentLinkedQueue<Object> queue = new ConcurrentLinkedQueue<>();
        AtomicInteger queuedAtOnce = new AtomicInteger();
        AtomicBoolean done = new AtomicBoolean();
        AtomicLong takenPermits = new AtomicLong();
        int threads = 4;
        int perThread = 200_000;
        CountDownLatch offered = new CountDownLatch(threads);
        for (int t = 0; t < threads; t++) {
            new Thread(() -> {
                for (int i = 0; i < perThread; i++) {
                    if (inbox.offerPermits(1)) {
                        queue.add(Boolean.TRUE);
                        queuedAtOnce.accumulateAndGet(queue.size(), Math::max);
                    }
                }
                offered.countDown();
            }, "offer-" + t).start();
        }
        Thread taker = new Thread(() -> {
            ConsumerInbox.Taken taken = new ConsumerInbox.Taken();
            while (!done.get() || !queue.isEmpty()) {
                if (queue.poll() != null) {
                    inbox.takeInto(taken);
                    takenPermits.addAndGet(taken.permitsBefore);
                }
            }
        }, "take");
        taker.start();
        offered.await();
        done.set(true);
        taker.join();
        assertEquals(takenPermits.get(), (long) threads * perThread, "permits taken");
        assertTrue(queuedAtOnce.get() <= 1, "tasks queued at once: " + queuedAtOnce.get());
    }
}
