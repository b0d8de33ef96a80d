package io.github.pulsarbroadcast.broadcast.dispatch;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.testng.annotations.Test;

/**
 * Contract of {@link GatheredFlows}: every permit added is applied exactly once, on the dispatch thread, with real
 * threads adding, holding and releasing while the dispatch thread drains (the seed reproduces the choices, not the
 * interleaving); a consumer that is held, or not yet joined, gets its permits from the task that holds it and never
 * from a drain before that task ends.
 */
public class GatheredFlowsTest {

    private static BroadcastConsumer consumer(int id, boolean joined) {
        BroadcastConsumer bc = new BroadcastConsumer(null, id, "c" + id, null, null, false, 0, false);
        bc.joined = joined;
        return bc;
    }

    @Test(groups = "unit", timeOut = 60_000)
    public void everyPermitIsAppliedExactlyOnceUnderConcurrentFlowsAndHolds() throws Exception {
        long seed = System.nanoTime();
        System.out.println("GatheredFlowsTest seed: " + seed);
        int consumers = 50;
        int threads = 4;
        int flowsPerThread = 50_000;
        GatheredFlows flows = new GatheredFlows();
        List<BroadcastConsumer> all = new ArrayList<>();
        for (int i = 0; i < consumers; i++) {
            all.add(consumer(i, true));
        }
        long[] applied = new long[consumers]; // dispatch thread only
        GatheredFlows.Applier applier = (bc, permits) -> applied[(int) bc.consumerId] += permits;
        ExecutorService dispatch = Executors.newSingleThreadExecutor();
        AtomicLong[] added = new AtomicLong[consumers];
        for (int i = 0; i < consumers; i++) {
            added[i] = new AtomicLong();
        }
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> producers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Random random = new Random(seed + t);
            Thread thread = new Thread(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int n = 0; n < flowsPerThread; n++) {
                    BroadcastConsumer bc = all.get(random.nextInt(consumers));
                    if (random.nextInt(50) == 0) {
                        flows.hold(bc);
                        dispatch.execute(() -> flows.release(bc, true, applier));
                    }
                    int permits = 1 + random.nextInt(10);
                    added[(int) bc.consumerId].addAndGet(permits);
                    if (flows.add(bc, permits)) {
                        dispatch.execute(() -> flows.drain(applier));
                    }
                }
            });
            thread.start();
            producers.add(thread);
        }
        start.countDown();
        for (Thread thread : producers) {
            thread.join();
        }
        dispatch.shutdown();
        assertTrue(dispatch.awaitTermination(30, TimeUnit.SECONDS));
        for (int i = 0; i < consumers; i++) {
            assertEquals(applied[i], added[i].get(), "consumer " + i + ", seed " + seed);
            assertEquals(all.get(i).flowed, 0, "nothing left gathered for consumer " + i + ", seed " + seed);
        }
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void aConsumerNotYetJoinedGetsItsPermitsFromItsJoin() {
        GatheredFlows flows = new GatheredFlows();
        BroadcastConsumer early = consumer(1, false);
        BroadcastConsumer other = consumer(2, true);
        long[] applied = new long[3];
        GatheredFlows.Applier applier = (bc, permits) -> applied[(int) bc.consumerId] += permits;
        assertTrue(flows.add(other, 3), "the first flow asks for a drain");
        flows.add(early, 5);
        flows.drain(applier); // runs before early's join task
        assertEquals(applied[2], 3);
        assertEquals(applied[1], 0, "nothing applied before the join");
        assertTrue(flows.add(early, 2), "a later flow asks for a new drain");
        early.joined = true; // the join task
        flows.release(early, false, applier);
        assertEquals(applied[1], 7, "the join applies everything gathered before it");
        flows.drain(applier);
        assertEquals(applied[1], 7, "and nothing twice");
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void aHeldConsumerGetsItsPermitsWhenTheHeldTaskEnds() {
        GatheredFlows flows = new GatheredFlows();
        BroadcastConsumer bc = consumer(1, true);
        long[] applied = new long[2];
        GatheredFlows.Applier applier = (c, permits) -> applied[(int) c.consumerId] += permits;
        flows.hold(bc); // a redelivery is posted
        flows.hold(bc); // and another
        flows.add(bc, 4);
        flows.drain(applier);
        assertEquals(applied[1], 0, "held: not applied before the redelivery");
        flows.release(bc, true, applier);
        assertEquals(applied[1], 0, "still held by the second redelivery");
        flows.add(bc, 1);
        flows.release(bc, true, applier);
        assertEquals(applied[1], 5);
    }
}
