package io.github.pulsarbroadcast.it;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Netty's leak detector, made to fail tests: the integration tests run with {@code -Dio.netty.leakDetection.level=
 * paranoid} (every buffer tracked), and this factory records every leak Netty reports instead of only logging it.
 * {@link BrokerTestBase} checks after each test class, once its cluster is closed: it collects garbage, allocates a
 * little (Netty reports leaks when it next allocates) and fails the class if any leak was reported.
 *
 * <p>Threading: leaks are reported on any thread into a concurrent queue; {@link #install} runs once, from the static
 * initializer of {@link BrokerTestBase}, before any buffer class is loaded by the tests.
 */
final class LeakCheck {

    private static final ConcurrentLinkedQueue<String> LEAKS = new ConcurrentLinkedQueue<>();
    /**
     * BookKeeper 4.14's bookie pre-allocates its next entry log and does not release that log's write buffer when
     * the bookie shuts down (seen when a test restarts its bookie); it is the bookie's own buffer, created and last
     * touched only in {@code EntryLoggerAllocator}, and says nothing about the plugin. Every other leak fails.
     */
    private static final String KNOWN_BOOKIE_LEAK = "org.apache.bookkeeper.bookie.EntryLoggerAllocator.allocateNewLog";

    private LeakCheck() {
    }

    static void install() {
        ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new ResourceLeakDetectorFactory() {
            @Override
            @SuppressWarnings("deprecation")
            public <T> ResourceLeakDetector<T> newResourceLeakDetector(Class<T> resource, int samplingInterval,
                                                                       long maxActive) {
                return new ResourceLeakDetector<T>(resource, samplingInterval, maxActive) {
                    @Override
                    protected void reportTracedLeak(String resourceType, String records) {
                        LEAKS.add(resourceType + records);
                        super.reportTracedLeak(resourceType, records);
                    }

                    @Override
                    protected void reportUntracedLeak(String resourceType) {
                        LEAKS.add(resourceType + " (untraced)");
                        super.reportUntracedLeak(resourceType);
                    }
                };
            }
        });
    }

    /** Fails when Netty reported a leak since the last check. */
    static void assertNoLeaks(String after) {
        for (int round = 0; round < 3; round++) {
            System.gc();
            List<ByteBuf> probes = new ArrayList<>();
            for (int i = 0; i < 64; i++) {
                probes.add(PooledByteBufAllocator.DEFAULT.directBuffer(16));
            }
            probes.forEach(ByteBuf::release);
        }
        List<String> found = new ArrayList<>();
        for (String leak = LEAKS.poll(); leak != null; leak = LEAKS.poll()) {
            if (!leak.contains(KNOWN_BOOKIE_LEAK)) {
                found.add(leak);
            }
        }
        if (!found.isEmpty()) {
            throw new AssertionError(found.size() + " Netty buffer leak(s) reported during " + after + ":\n"
                    + String.join("\n", found));
        }
    }
}
