package io.github.pulsarbroadcast.broadcast.cnx;

import static org.testng.Assert.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.testng.annotations.Test;

/**
 * {@link SubscribeFailures}' contract: the first failure of each 10-s window is logged at WARN with the number of
 * failures since the previous WARN; every other failure goes to DEBUG and is counted; with many threads failing at
 * once, exactly one WARN per window and no failure uncounted.
 *
 * <p>Threading: the test thread, and a pool for the concurrent case.
 */
@Test(groups = "unit")
public class SubscribeFailuresTest {

    @Test(timeOut = 10_000)
    public void oneWarningPerWindowCarriesTheCountOfTheRest() {
        AtomicLong clock = new AtomicLong(1_000);
        SubscribeFailures failures = new SubscribeFailures(clock::get);
        assertEquals(failures.failed(), 0, "the first failure is a warning with nothing before it");
        assertEquals(failures.failed(), -1);
        assertEquals(failures.failed(), -1);
        clock.addAndGet(SubscribeFailures.INTERVAL_NANOS - 1);
        assertEquals(failures.failed(), -1, "still inside the window");
        clock.addAndGet(1);
        assertEquals(failures.failed(), 3, "the next window's warning counts the three logged at DEBUG");
        clock.addAndGet(5 * SubscribeFailures.INTERVAL_NANOS);
        assertEquals(failures.failed(), 0, "a quiet broker warns at once, with nothing to count");
    }

    @Test(timeOut = 30_000)
    public void concurrentFailuresGiveOneWarningAndLoseNoCount() throws Exception {
        AtomicLong clock = new AtomicLong();
        SubscribeFailures failures = new SubscribeFailures(clock::get);
        int threads = 8;
        int each = 10_000;
        AtomicInteger warnings = new AtomicInteger();
        // A failure that raced with the first warning may be counted by it (its number came first) or by the next.
        AtomicLong countedAtWarnings = new AtomicLong();
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                done.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < each; i++) {
                        long counted = failures.failed();
                        if (counted >= 0) {
                            warnings.incrementAndGet();
                            countedAtWarnings.addAndGet(counted);
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : done) {
                f.get(20, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(warnings.get(), 1, "one window, one warning");
        clock.addAndGet(SubscribeFailures.INTERVAL_NANOS);
        assertEquals(countedAtWarnings.get() + failures.failed(), threads * each - 1,
                "every failure but the first warning's own counted once, by one warning or the next");
    }
}
