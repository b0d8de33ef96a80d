package io.github.pulsarbroadcast.executor;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertSame;
import static org.testng.Assert.assertTrue;
import static org.testng.Assert.expectThrows;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.LogEvent;
import org.testng.annotations.Test;

/** A throwing task is contained and logged; a bounded queue rejects clearly and exactly. */
public class FailureAndBoundTest {

    @Test(groups = "unit", timeOut = 10_000)
    public void throwingTaskIsLoggedAndCountedAndDoesNotKillItsThread() {
        SubscriptionKey key = SubscriptionKey.of(Keys.TOPIC, "fails");
        RuntimeException boom = new IllegalStateException("boom");
        AtomicReference<Thread> threwOn = new AtomicReference<>();
        AtomicReference<Thread> nextRanOn = new AtomicReference<>();
        AtomicInteger unorderedAfterFailure = new AtomicInteger();

        try (CapturingAppender log = CapturingAppender.attachTo(SubscriptionOrderedExecutor.class);
             SubscriptionOrderedExecutor executor = SubscriptionOrderedExecutor.builder()
                     .name("fail").numThreads(1).build()) {
            executor.executeOrdered(key, () -> {
                threwOn.set(Thread.currentThread());
                throw boom;
            });
            executor.executeOrdered(key, () -> nextRanOn.set(Thread.currentThread()));
            executor.executeUnordered(() -> {
                throw new AssertionError("an Error is contained too");
            });
            executor.executeUnordered(unorderedAfterFailure::incrementAndGet);
            await().atMost(Duration.ofSeconds(5)).until(() -> unorderedAfterFailure.get() == 1);

            assertSame(nextRanOn.get(), threwOn.get(), "the thread was replaced after the failure");
            assertEquals(nextRanOn.get().getName(), "fail-0");
            assertEquals(executor.failedTasks(), 2);

            List<LogEvent> errors = new ArrayList<>();
            for (LogEvent event : log.events()) {
                if (event.getLevel() == Level.ERROR) {
                    errors.add(event);
                }
            }
            assertEquals(errors.size(), 2, "each failure is logged once");
            String first = errors.get(0).getMessage().getFormattedMessage();
            assertTrue(first.contains(key.toString()) && first.contains("fail-0"), "no key/thread in: " + first);
            assertSame(errors.get(0).getThrown(), boom);
            String second = errors.get(1).getMessage().getFormattedMessage();
            assertTrue(second.contains("unordered"), second);
        }
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void fullQueueRejectsWithAMessageNamingTheKeyAndThread() {
        SubscriptionKey key = SubscriptionKey.of(Keys.TOPIC, "bounded-sub");
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger done = new AtomicInteger();

        try (SubscriptionOrderedExecutor executor = SubscriptionOrderedExecutor.builder()
                .name("bounded").numThreads(1).maxQueuedTasksPerThread(3).build()) {
            executor.executeOrdered(key, () -> {
                started.countDown();
                OrderingTest.awaitQuietly(release);
            });
            OrderingTest.awaitQuietly(started);
            for (int i = 0; i < 3; i++) {
                executor.executeOrdered(key, done::incrementAndGet);
            }
            assertEquals(executor.queuedTasks(0), 3);

            RejectedExecutionException ordered = expectThrows(RejectedExecutionException.class,
                    () -> executor.executeOrdered(key, done::incrementAndGet));
            assertTrue(ordered.getMessage().contains(key.toString()), ordered.getMessage());
            assertTrue(ordered.getMessage().contains("bounded-0"), ordered.getMessage());
            assertTrue(ordered.getMessage().contains("maxQueuedTasksPerThread=3"), ordered.getMessage());
            RejectedExecutionException unordered = expectThrows(RejectedExecutionException.class,
                    () -> executor.executeUnordered(done::incrementAndGet));
            assertTrue(unordered.getMessage().contains("unordered task on thread bounded-0"), unordered.getMessage());
            assertEquals(executor.queuedTasks(0), 3, "a rejected task must not count as queued");

            release.countDown();
            await().atMost(Duration.ofSeconds(5)).until(() -> done.get() == 3 && executor.queuedTasks(0) == 0);
            executor.executeOrdered(key, done::incrementAndGet);
            await().atMost(Duration.ofSeconds(5)).until(() -> done.get() == 4);
        } finally {
            release.countDown();
        }
    }

    @Test(groups = "unit", timeOut = 20_000)
    public void boundIsExactUnderConcurrentSubmitters() throws Exception {
        int submitters = 4;
        int attemptsEach = 500;
        int bound = 100;
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch startGate = new CountDownLatch(1);
        AtomicInteger accepted = new AtomicInteger();
        AtomicInteger rejected = new AtomicInteger();
        AtomicInteger ran = new AtomicInteger();
        ExecutorService producerThreads = Executors.newFixedThreadPool(submitters);

        try (SubscriptionOrderedExecutor executor = SubscriptionOrderedExecutor.builder()
                .name("race").numThreads(1).maxQueuedTasksPerThread(bound).build()) {
            executor.executeUnordered(() -> {
                started.countDown();
                OrderingTest.awaitQuietly(release);
            });
            OrderingTest.awaitQuietly(started);
            List<CompletableFuture<Void>> producers = new ArrayList<>();
            for (int s = 0; s < submitters; s++) {
                SubscriptionKey key = SubscriptionKey.of(Keys.TOPIC, "race-" + s);
                producers.add(CompletableFuture.runAsync(() -> {
                    OrderingTest.awaitQuietly(startGate);
                    for (int i = 0; i < attemptsEach; i++) {
                        try {
                            executor.executeOrdered(key, ran::incrementAndGet);
                            accepted.incrementAndGet();
                        } catch (RejectedExecutionException e) {
                            rejected.incrementAndGet();
                        }
                    }
                }, producerThreads));
            }
            startGate.countDown();
            CompletableFuture.allOf(producers.toArray(new CompletableFuture<?>[0])).get(10, TimeUnit.SECONDS);

            assertEquals(accepted.get(), bound);
            assertEquals(rejected.get(), submitters * attemptsEach - bound);
            assertEquals(executor.queuedTasks(0), bound);
            release.countDown();
            await().atMost(Duration.ofSeconds(5)).until(() -> ran.get() == bound);
        } finally {
            release.countDown();
            producerThreads.shutdownNow();
        }
    }
}
