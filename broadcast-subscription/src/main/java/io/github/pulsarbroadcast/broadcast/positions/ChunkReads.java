package io.github.pulsarbroadcast.broadcast.positions;

import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * Lets one chunk read at a time reach the metadata store. Pulsar 2.10's batched ZooKeeper store sends the reads queued
 * together as one multi-read whose size it does not bound (writes are bounded by {@code
 * metadataStoreBatchingMaxSizeKb}): chunk reads issued together come back as one response larger than ZooKeeper's
 * 1 MiB {@code jute.maxbuffer}, and the ZooKeeper client drops its connection ("Packet len ... is out of range"),
 * failing every metadata operation in flight on the broker (measured: a topic move with 100,000 consumers whose
 * snapshot was 3.6 MB, docs/benchmarks.md). One {@code ChunkReads} serves every subscription of a broker, so that
 * loads of several subscriptions at once do not add up either.
 *
 * <p>Threading: any thread; {@link #tail} is guarded by this object's monitor. Each read starts when the previous one
 * has completed (on the thread that completed it).
 */
public final class ChunkReads {

    /** The last read handed out; guarded by {@code this}. */
    private CompletableFuture<?> tail = CompletableFuture.completedFuture(null);

    /** Starts {@code read} once every read handed out before it has completed (successfully or not). */
    public synchronized <T> CompletableFuture<T> read(Supplier<CompletableFuture<T>> read) {
        CompletableFuture<T> next = tail.handle((v, e) -> null).thenCompose(v -> read.get());
        tail = next;
        return next;
    }
}
