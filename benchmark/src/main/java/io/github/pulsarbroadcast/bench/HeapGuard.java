package io.github.pulsarbroadcast.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.util.Locale;

/**
 * Notices that this JVM's heap is full before an {@link OutOfMemoryError} shows up on some client thread (where the
 * Pulsar client would only log it): after a garbage collection the old generation is still at least 97% full.
 *
 * <p>Threading: stateless; any thread (the main thread polls it).
 */
final class HeapGuard {

    private static final double FULL = 0.97;

    private HeapGuard() {
    }

    /** Why the heap counts as exhausted, or null when it does not. */
    static String check() {
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() != MemoryType.HEAP || !pool.isCollectionUsageThresholdSupported()) {
                continue;
            }
            MemoryUsage afterGc = pool.getCollectionUsage();
            if (afterGc != null && afterGc.getMax() > 0 && afterGc.getUsed() >= FULL * afterGc.getMax()) {
                return String.format(Locale.ROOT, "the benchmark JVM's heap is exhausted (%s: %,d of %,d MiB in use"
                        + " after garbage collection); give it more (PULSAR_BROADCAST_JAVA_OPTS=-Xmx...)",
                        pool.getName(), afterGc.getUsed() >> 20, afterGc.getMax() >> 20);
            }
        }
        return null;
    }
}
