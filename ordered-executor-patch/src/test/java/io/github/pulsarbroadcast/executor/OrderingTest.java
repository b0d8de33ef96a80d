package io.github.pulsarbroadcast.executor;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertThrows;
import static org.testng.Assert.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.testng.annotations.Test;

/** Same key: same thread, FIFO, never concurrent. Different keys: spread over all threads. */
public class OrderingTest {

    /** What one task saw when it ran. */
    private static final class Run {
        final int submitter;
        final int seq;
        final String thread;
        final boolean onOrderedThread;
        final int concurrentRunsOfKey;

        Run(int submitter, int seq, String thread, boolean onOrderedThread, int concurrentRunsOfKey) {
            this.submitter = submitter;
            this.seq = seq;
            this.thread = thread;
            this.onOrderedThread = onOrderedThread;
            this.concurrentRunsOfKey = concurrentRunsOfKey;
        }
    }

    @Test(groups = "unit", timeOut = 20_000)
    public void sameKeyRunsOnOneThreadInFifoOrderUnderConcurrentSubmitters() throws Exception {
        int submitters = 4;
        int keys = 40;
        int tasksPerSubmitterAndKey = 200;
        int total = submitters * keys * tasksPerSubmitterAndKey;
        Map<SubscriptionKey, List<Run>> runs = new ConcurrentHashMap<>();
        Map<SubscriptionKey, AtomicInteger> inFlight = new ConcurrentHashMap<>();
        List<SubscriptionKey> keyList = new ArrayList<>();
        for (int k = 0; k < keys; k++) {
            SubscriptionKey key = SubscriptionKey.of(Keys.TOPIC, "sub-" + k);
            keyList.add(key);
            // Synchronized so that a broken executor shows up as a failed assertion, not as a corrupt list.
            runs.put(key, Collections.synchronizedList(new ArrayList<>()));
            inFlight.put(key, new AtomicInteger());
        }
        AtomicInteger done = new AtomicInteger();
        CountDownLatch startGate = new CountDownLatch(1);

        // Own threads: the common pool has a single thread on a 2-core machine, which would serialize submitters.
        ExecutorService producerThreads = Executors.newFixedThreadPool(submitters);
        try (SubscriptionOrderedExecutor executor = SubscriptionOrderedExecutor.builder()
                .name("fifo").numThreads(4).build()) {
            List<CompletableFuture<Void>> producers = new ArrayList<>();
            for (int s = 0; s < submitters; s++) {
                int submitter = s;
                producers.add(CompletableFuture.runAsync(() -> {
                    awaitQuietly(startGate);
                    for (int seq = 0; seq < tasksPerSubmitterAndKey; seq++) {
                        for (SubscriptionKey key : keyList) {
                            int taskSeq = seq;
                            executor.executeOrdered(key, () -> {
                                int concurrent = inFlight.get(key).incrementAndGet();
                                runs.get(key).add(new Run(submitter, taskSeq, Thread.currentThread().getName(),
                                        executor.isOrderedThreadOf(key), concurrent));
                                inFlight.get(key).decrementAndGet();
                                done.incrementAndGet();
                            });
                        }
                    }
                }, producerThreads));
            }
            startGate.countDown();
            CompletableFuture.allOf(producers.toArray(new CompletableFuture<?>[0])).get(15, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(15)).until(() -> done.get() == total);

            for (SubscriptionKey key : keyList) {
                assertRanInOrderOnItsThread(executor, key, runs.get(key), submitters, tasksPerSubmitterAndKey);
            }
        } finally {
            producerThreads.shutdownNow();
        }
    }

    private static void assertRanInOrderOnItsThread(SubscriptionOrderedExecutor executor, SubscriptionKey key,
                                                    List<Run> keyRuns, int submitters, int tasksPerSubmitter) {
        assertEquals(keyRuns.size(), submitters * tasksPerSubmitter, key.toString());
        int[] nextSeq = new int[submitters];
        Set<String> threads = new HashSet<>();
        for (Run run : keyRuns) {
            threads.add(run.thread);
            assertTrue(run.onOrderedThread, key + " ran off its ordered thread: " + run.thread);
            assertEquals(run.concurrentRunsOfKey, 1, key + " had two tasks running at once");
            assertEquals(run.seq, nextSeq[run.submitter], key + ": submitter " + run.submitter + " out of order");
            nextSeq[run.submitter]++;
        }
        assertEquals(threads, Set.of("fifo-" + executor.threadIndex(key)), key.toString());
    }

    @Test(groups = "unit", timeOut = 20_000)
    public void manySubscriptionsOfOneTopicSpreadOverAllThreads() {
        int numThreads = 4;
        int subscriptions = 1_000;
        Map<String, AtomicInteger> tasksPerThread = new ConcurrentHashMap<>();
        AtomicInteger done = new AtomicInteger();

        try (SubscriptionOrderedExecutor executor = SubscriptionOrderedExecutor.builder()
                .name("spread").numThreads(numThreads).build()) {
            int[] byIndex = new int[numThreads];
            for (int i = 0; i < subscriptions; i++) {
                SubscriptionKey key = SubscriptionKey.of(Keys.TOPIC, "sub-" + i);
                byIndex[executor.threadIndex(key)]++;
                executor.executeOrdered(key, () -> {
                    tasksPerThread.computeIfAbsent(Thread.currentThread().getName(), n -> new AtomicInteger())
                            .incrementAndGet();
                    done.incrementAndGet();
                });
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> done.get() == subscriptions);

            Map<String, Integer> expected = new HashMap<>();
            for (int i = 0; i < numThreads; i++) {
                // 250 expected per thread; a topic-keyed executor would put all 1000 on one.
                assertTrue(byIndex[i] > 175 && byIndex[i] < 325, "thread " + i + " got " + byIndex[i]);
                expected.put("spread-" + i, byIndex[i]);
            }
            Map<String, Integer> actual = new HashMap<>();
            tasksPerThread.forEach((thread, count) -> actual.put(thread, count.get()));
            assertEquals(actual, expected);
        }
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void threadsAreNamedPrefixDashIndex() {
        try (SubscriptionOrderedExecutor executor = SubscriptionOrderedExecutor.builder()
                .name("named").numThreads(3).build()) {
            for (int i = 0; i < 3; i++) {
                SubscriptionKey key = Keys.onThread(executor, i);
                String name = CompletableFuture.supplyAsync(() -> Thread.currentThread().getName(),
                        executor.orderedExecutor(key)).join();
                assertEquals(name, "named-" + i);
            }
            assertEquals(executor.numThreads(), 3);
        }
    }

    /** The builder's defaults (executor.md): "broadcast-executor", one thread per core, daemon threads. */
    @Test(groups = "unit", timeOut = 10_000)
    public void defaultsAreOneDaemonThreadPerCoreNamedBroadcastExecutor() {
        try (SubscriptionOrderedExecutor executor = SubscriptionOrderedExecutor.builder().build()) {
            assertEquals(executor.numThreads(), Runtime.getRuntime().availableProcessors());
            assertEquals(executor.name(), "broadcast-executor");
            for (int i = 0; i < executor.numThreads(); i++) {
                Thread t = CompletableFuture.supplyAsync(Thread::currentThread,
                        executor.orderedExecutor(Keys.onThread(executor, i))).join();
                assertEquals(t.getName(), "broadcast-executor-" + i);
                assertTrue(t.isDaemon(), t.getName() + " is a daemon thread");
            }
        }
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void orderedExecutorViewRunsOnTheKeysThread() {
        try (SubscriptionOrderedExecutor executor = SubscriptionOrderedExecutor.builder()
                .name("view").numThreads(4).build()) {
            SubscriptionKey key = SubscriptionKey.of(Keys.TOPIC, "view-sub");
            SubscriptionKey other = Keys.onThread(executor, (executor.threadIndex(key) + 1) % 4);

            boolean[] seen = CompletableFuture.supplyAsync(
                    () -> new boolean[] {executor.isOrderedThreadOf(key), executor.isOrderedThreadOf(other)},
                    executor.orderedExecutor(key)).join();

            assertTrue(seen[0], "not on the key's thread");
            assertTrue(!seen[1], "isOrderedThreadOf is true for a key of another thread");
            assertTrue(!executor.isOrderedThreadOf(key), "the test thread is not an executor thread");
        }
    }

    @Test(groups = "unit", timeOut = 5_000)
    public void builderRejectsBadSettings() {
        assertThrows(IllegalArgumentException.class, () -> SubscriptionOrderedExecutor.builder().numThreads(0));
        assertThrows(IllegalArgumentException.class, () -> SubscriptionOrderedExecutor.builder().name(" "));
        assertThrows(IllegalArgumentException.class,
                () -> SubscriptionOrderedExecutor.builder().maxQueuedTasksPerThread(-1));
    }

    static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
