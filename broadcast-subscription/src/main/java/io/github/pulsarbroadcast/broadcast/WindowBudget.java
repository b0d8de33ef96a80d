package io.github.pulsarbroadcast.broadcast;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The bytes that all windows of recent entries on one broker may hold together ({@code broadcastWindowBrokerMaxBytes}),
 * besides each window's own bound: with many broadcast subscriptions or partitions, per-window bounds alone would
 * add up outside the broker's {@code managedLedgerCacheSizeMB}. A window that cannot reserve room for an entry
 * evicts its own oldest entries; if that is not enough it keeps the entry out, and the consumers that need it read it
 * through the broker's entry cache (a catch-up read) instead.
 *
 * <p>Threading: any thread (each window reserves and releases on its own dispatch thread); an atomic counter.
 */
public final class WindowBudget {

    private final long maxBytes;
    private final AtomicLong used = new AtomicLong();

    public WindowBudget(long maxBytes) {
        this.maxBytes = maxBytes;
    }

    /** A budget that never refuses (tests). */
    public static WindowBudget unlimited() {
        return new WindowBudget(Long.MAX_VALUE);
    }

    /** Takes {@code bytes} if they fit. */
    public boolean tryReserve(long bytes) {
        for (;;) {
            long now = used.get();
            if (now + bytes > maxBytes) {
                return false;
            }
            if (used.compareAndSet(now, now + bytes)) {
                return true;
            }
        }
    }

    public void release(long bytes) {
        used.addAndGet(-bytes);
    }

    /** Bytes held by all windows now. */
    public long used() {
        return used.get();
    }
}
