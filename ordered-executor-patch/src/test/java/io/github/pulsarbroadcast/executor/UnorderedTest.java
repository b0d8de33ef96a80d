package io.github.pulsarbroadcast.executor;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertTrue;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.testng.annotations.Test;

/** Unordered tasks (ACKs) do not wait behind one key's long queue, and use every thread. */
public class UnorderedTest {

    @Test(groups = "unit", timeOut = 20_000)
    public void unorderedTasksCompleteWhileOneKeysThreadIsBlockedBehindALongQueue() {
        int numThreads = 4;
        int queuedBehindBlocker = 10_000;
        int unordered = 64;
        CountDownLatch blockerStarted = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger orderedDone = new AtomicInteger();
        AtomicInteger unorderedDone = new AtomicInteger();
        Set<String> unorderedThreads = ConcurrentHashMap.newKeySet();

        try (SubscriptionOrderedExecutor executor = SubscriptionOrderedExecutor.builder()
                .name("ack").numThreads(numThreads).build()) {
            SubscriptionKey hot = SubscriptionKey.of(Keys.TOPIC, "hot");
            int hotIndex = executor.threadIndex(hot);
            executor.executeOrdered(hot, () -> {
                blockerStarted.countDown();
                OrderingTest.awaitQuietly(release);
            });
            OrderingTest.awaitQuietly(blockerStarted);
            for (int i = 0; i < queuedBehindBlocker; i++) {
                executor.executeOrdered(hot, orderedDone::incrementAndGet);
            }
            assertEquals(executor.queuedTasks(hotIndex), queuedBehindBlocker);

            for (int i = 0; i < unordered; i++) {
                executor.executeUnordered(() -> {
                    unorderedThreads.add(Thread.currentThread().getName());
                    unorderedDone.incrementAndGet();
                });
            }
            // About 3/4 land on the 3 free threads and must finish while the hot thread is still blocked; the rest
            // wait in the hot thread's queue. Wait until every unordered task is either done or queued there.
            await().atMost(Duration.ofSeconds(10)).until(() ->
                    unorderedDone.get() + (executor.queuedTasks(hotIndex) - queuedBehindBlocker) == unordered);

            assertTrue(unorderedDone.get() > 0, "no unordered task ran while one thread was blocked");
            assertEquals(orderedDone.get(), 0, "the blocked key's queue moved");
            assertFalse(unorderedThreads.contains("ack-" + hotIndex), "ran on the blocked thread");

            release.countDown();
            await().atMost(Duration.ofSeconds(10)).until(() ->
                    orderedDone.get() == queuedBehindBlocker && unorderedDone.get() == unordered);
        } finally {
            release.countDown();
        }
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void unorderedTasksGoToEveryThread() {
        int tasks = 400;
        Set<String> threads = ConcurrentHashMap.newKeySet();
        AtomicInteger done = new AtomicInteger();

        try (SubscriptionOrderedExecutor executor = SubscriptionOrderedExecutor.builder()
                .name("rnd").numThreads(4).build()) {
            for (int i = 0; i < tasks; i++) {
                executor.executeUnordered(() -> {
                    threads.add(Thread.currentThread().getName());
                    done.incrementAndGet();
                });
            }
            await().atMost(Duration.ofSeconds(5)).until(() -> done.get() == tasks);
        }
        // Uniform over 4 threads: the chance that 400 tasks miss one thread is 4 * (3/4)^400, about 1e-50.
        assertEquals(threads, Set.of("rnd-0", "rnd-1", "rnd-2", "rnd-3"));
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void withOneThreadUnorderedTasksShareTheOnlyQueue() {
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger done = new AtomicInteger();

        try (SubscriptionOrderedExecutor executor = SubscriptionOrderedExecutor.builder()
                .name("single").numThreads(1).build()) {
            executor.executeOrdered(SubscriptionKey.of(Keys.TOPIC, "sub"), () -> OrderingTest.awaitQuietly(release));
            executor.executeUnordered(done::incrementAndGet);
            await().atMost(Duration.ofSeconds(5)).until(() -> executor.queuedTasks(0) == 1);
            assertEquals(done.get(), 0, "with one thread there is no escape from its queue");

            release.countDown();
            await().atMost(Duration.ofSeconds(5)).until(() -> done.get() == 1);
        } finally {
            release.countDown();
        }
    }
}
