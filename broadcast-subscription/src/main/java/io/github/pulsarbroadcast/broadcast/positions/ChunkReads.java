package io.github.pulsarbroadcast.broadcast.positions;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Lets one read of saved positions at a time (a head, which may hold a whole snapshot of up to a chunk, or a chunk)
 * reach the metadata store, and beside it one head read of a save ({@link #headCheck}). Pulsar 2.10's batched
 * ZooKeeper store sends the reads queued together as one multi-read whose size it does not bound (writes are bounded
 * by {@code metadataStoreBatchingMaxSizeKb}): chunk reads issued together come back as one response larger than
 * ZooKeeper's 1 MiB {@code jute.maxbuffer}, and the ZooKeeper client drops its connection ("Packet len ... is out of
 * range"), failing every metadata operation in flight on the broker (measured: a topic move with 100,000 consumers
 * whose snapshot was 3.6 MB, docs/benchmarks.md). One {@code ChunkReads} serves every subscription of a broker, so
 * that loads of several subscriptions at once do not add up either.
 *
 * <p>Threading: any thread; {@link #tail} and {@link #checks} are guarded by this object's monitor. Each read starts
 * when the previous one has completed (on the thread that completed it).
 */
public final class ChunkReads {

    /** Completes when the last read handed out has; guarded by {@code this}. */
    private CompletableFuture<Void> tail = CompletableFuture.completedFuture(null);
    /** The same for {@link #headCheck}; guarded by {@code this}. */
    private CompletableFuture<Void> checks = CompletableFuture.completedFuture(null);

    /** A read that has not answered after this long fails, so that it cannot hold up the reads behind it. */
    static final long TIMEOUT_SECONDS = 60;

    /**
     * Starts {@code read} once every read handed out before it has completed (successfully, failed or timed out after
     * {@link #TIMEOUT_SECONDS}).
     */
    public synchronized <T> CompletableFuture<T> read(Supplier<CompletableFuture<T>> read) {
        CompletableFuture<T> next = tail.thenCompose(v -> read.get().orTimeout(TIMEOUT_SECONDS, TimeUnit.SECONDS));
        tail = next.handle((v, e) -> null); // holds no result: a chunk is 256 KiB
        return next;
    }

    /**
     * As {@link #read}, in a queue of its own: the head read a chunked save makes before it writes its chunks, which
     * must not wait behind the chunk reads of loads (a save on close has seconds). A multi-read then holds at most one
     * read of each queue, about 512 KiB.
     */
    public synchronized <T> CompletableFuture<T> headCheck(Supplier<CompletableFuture<T>> read) {
        CompletableFuture<T> next = checks.thenCompose(v -> read.get().orTimeout(TIMEOUT_SECONDS, TimeUnit.SECONDS));
        checks = next.handle((v, e) -> null);
        return next;
    }
}
