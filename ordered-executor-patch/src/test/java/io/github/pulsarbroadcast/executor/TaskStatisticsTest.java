package io.github.pulsarbroadcast.executor;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;
import static org.testng.Assert.expectThrows;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.LogEvent;
import org.testng.annotations.Test;

/**
 * The per-thread statistics the broker's metrics export: tasks run, their time, slow tasks (counted, and warned about
 * at most once per thread every 10 s), queue depth.
 */
public class TaskStatisticsTest {

    /** Keeps the calling thread busy for {@code millis} (the task's work, not a wait). */
    private static void work(long millis) {
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (System.nanoTime() - until < 0) {
            Thread.onSpinWait();
        }
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void countsTasksTheirTimeAndSlowOnes() {
        SubscriptionKey key = SubscriptionKey.of(Keys.TOPIC, "stats");
        AtomicInteger done = new AtomicInteger();
        try (CapturingAppender log = CapturingAppender.attachTo(SubscriptionOrderedExecutor.class);
             SubscriptionOrderedExecutor executor = SubscriptionOrderedExecutor.builder().name("stats").numThreads(2)
                     .slowTaskThreshold(Duration.ofMillis(200)).build()) {
            int index = executor.threadIndex(key);
            long before = executor.completedTasks(index);
            for (int i = 0; i < 10; i++) {
                executor.executeOrdered(key, done::incrementAndGet);
            }
            // 200 ms against 400 ms tasks: a pause of the machine (GC, a busy neighbour) during one of the trivial
            // tasks must not make it slow (with 20 ms against 40 ms, a 20-ms stall failed the count; a review).
            executor.executeOrdered(key, () -> work(400));
            executor.executeOrdered(key, () -> work(400));
            executor.executeOrdered(key, done::incrementAndGet);
            await().atMost(Duration.ofSeconds(5)).until(() -> done.get() == 11
                    && executor.completedTasks(index) - before == 13);

            assertEquals(executor.slowTasks(index), 2, "both 400 ms tasks are over the 200 ms threshold");
            assertEquals(executor.slowTasks(1 - index), 0);
            assertTrue(executor.taskNanos(index) >= TimeUnit.MILLISECONDS.toNanos(800),
                    "task time counts the two 400 ms tasks: " + executor.taskNanos(index));
            assertEquals(executor.queuedTasks(index), 0);
            assertEquals(executor.threadName(index), "stats-" + index);
            long warnings = log.events().stream().filter(e -> e.getLevel() == Level.WARN).count();
            assertEquals(warnings, 1, "two slow tasks within 10 s on one thread give one warning");
            LogEvent warning = log.events().stream().filter(e -> e.getLevel() == Level.WARN).findFirst().get();
            String text = warning.getMessage().getFormattedMessage();
            assertTrue(text.contains("stats-" + index) && text.contains("slow-task threshold 200 ms"), text);
        }
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void queueDepthIsVisibleWhileAThreadIsBusy() throws InterruptedException {
        SubscriptionKey key = SubscriptionKey.of(Keys.TOPIC, "depth");
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch started = new CountDownLatch(1);
        try (SubscriptionOrderedExecutor executor = SubscriptionOrderedExecutor.builder().name("depth").numThreads(1)
                .slowTaskThreshold(Duration.ZERO).build()) {
            executor.executeOrdered(key, () -> {
                started.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            started.await();
            for (int i = 0; i < 5; i++) {
                executor.executeOrdered(key, () -> { });
            }
            assertEquals(executor.queuedTasks(0), 5);
            release.countDown();
            await().atMost(Duration.ofSeconds(5)).until(() -> executor.queuedTasks(0) == 0
                    && executor.completedTasks(0) >= 6);
            assertEquals(executor.slowTasks(0), 0, "the threshold is off");
        }
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void negativeThresholdIsRefused() {
        IllegalArgumentException e = expectThrows(IllegalArgumentException.class,
                () -> SubscriptionOrderedExecutor.builder().slowTaskThreshold(Duration.ofMillis(-1)));
        assertTrue(e.getMessage().contains("slowTaskThreshold"), e.getMessage());
    }
}
