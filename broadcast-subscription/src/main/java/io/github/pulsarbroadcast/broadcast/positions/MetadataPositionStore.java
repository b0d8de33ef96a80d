package io.github.pulsarbroadcast.broadcast.positions;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;
import org.apache.pulsar.common.util.FutureUtil;
import org.apache.pulsar.metadata.api.GetResult;
import org.apache.pulsar.metadata.api.MetadataStore;
import org.apache.pulsar.metadata.api.MetadataStoreException.BadVersionException;
import org.apache.pulsar.metadata.api.MetadataStoreException.NotFoundException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A subscription's positions in the cluster's metadata store (ZooKeeper in a stock 2.10 cluster), at its node under
 * {@link PositionNodes#ROOT} (the same path, encoded the same way, as the subscription's managed cursor under
 * {@code /managed-ledgers}).
 *
 * <p>That node, the head ({@link PositionHead}), holds the snapshot itself when it fits in {@link #chunkBytes} (one
 * atomic write), otherwise where it is: chunk nodes {@code <slot>-<i>} written before the head, in the slot the current
 * head does not use, with the length and CRC32 of the whole, so a crash between the chunks and the head leaves the
 * previous snapshot intact. Every head write is conditional on the version this store last saw: {@link #load} and
 * {@link #discard} write the head once with this store's own writer id, so a broker that lost the topic (paused past
 * its session, say) fails its next write and stops ({@link #isFenced}). A chunked save reads the head before it writes
 * its chunks, so a stale writer finds the new owner's head and stops before it touches the chunks that head points to;
 * one paused again between that read and its chunk writes could still overwrite them, which the CRC then rejects: the
 * subscription falls back to its recovery window at the mark-delete position (duplicates for consumers back within
 * it; one away for longer loses its saved position; chunk nodes named after their writer would close that too, at the
 * cost of a new snapshot format). A store that was not taken over (its load or discard failed; the installation is
 * then refused, and its retry loads with a new store, so in the broker this is only a safeguard) takes the head
 * over before its first save while this broker owns the topic, and otherwise stands down. A head taken over no
 * longer says its snapshot was saved on close. A head created before the subscription's managed cursor node belongs
 * to an earlier subscription of the same name (deleted, its positions not yet removed): {@link #load} discards it
 * rather than resume this subscription's consumers from it.
 *
 * <p>Threading: any thread; writes are chained on {@link #tail} (guarded by {@code this}) and run one at a time;
 * {@link #version}, {@link #slot} and the flags are guarded by {@code this}.
 */
public final class MetadataPositionStore implements PositionStore {

    private static final Logger log = LoggerFactory.getLogger(MetadataPositionStore.class);

    /**
     * A quarter of ZooKeeper's default 1 MiB packet limit ({@code jute.maxbuffer}): one chunk read, batched by the
     * metadata store with other reads in flight, stays well below it ({@link ChunkReads}).
     */
    public static final int DEFAULT_CHUNK_BYTES = 256 * 1024;

    private final MetadataStore store;
    private final String path;
    /** The subscription's managed cursor node, whose creation time tells this subscription from an earlier one. */
    private final String cursorPath;
    private final String name;
    private final int chunkBytes;
    private final ChunkReads chunkReads;
    private final long writerId = ThreadLocalRandom.current().nextLong();
    /** Whether this broker still owns the topic (see the constructor). */
    private final TopicOwnership ownership;

    private CompletableFuture<Void> tail = CompletableFuture.completedFuture(null);
    /**
     * Version of the head node last seen; -1 until this store has written the head with its writer id ({@link #load},
     * {@link #discard}, or the take-over before a first save after those failed).
     */
    private long version = -1;
    private int slot;
    private boolean fenced;
    private boolean deleted;
    /**
     * Set when a head write failed: it may have been applied all the same (ZooKeeper's connection loss reports a
     * write it made as failed), so {@link #version} and {@link #slot} may be stale, and the next write reads the head
     * first. Without it a chunked save wrote its chunks into the slot the live head pointed at (regression,
     * forty-second session's review).
     */
    private boolean headUnknown;
    /**
     * Creation time of the subscription's cursor node as {@link #load} or {@link #discard} read it (0: not read, or
     * not kept by the store): tells this subscription's cursor from that of one created again under its name
     * ({@link #headGone}). Guarded by {@code this}.
     */
    private long cursorCreated;

    /**
     * @param managedLedgerName the topic's managed ledger ({@code TopicName#getPersistenceNamingEncoding})
     * @param cursorName the subscription's cursor name ({@code Codec.encode(subscription)})
     */
    public MetadataPositionStore(MetadataStore store, String managedLedgerName, String cursorName, String logName,
                                 int chunkBytes) {
        this(store, managedLedgerName, cursorName, logName, chunkBytes, new ChunkReads());
    }

    /** As above, with chunk reads one at a time over {@code chunkReads} (one per broker: see {@link ChunkReads}). */
    public MetadataPositionStore(MetadataStore store, String managedLedgerName, String cursorName, String logName,
                                 int chunkBytes, ChunkReads chunkReads) {
        this(store, managedLedgerName, cursorName, logName, chunkBytes, chunkReads,
                () -> CompletableFuture.completedFuture(true));
    }

    /**
     * As above; {@code ownsTopic} tells whether this broker still owns the topic (serves it, or still holds its
     * bundle while closing it): a store whose load did not take the head over stands down rather than take over a
     * head another store took over since, when it no longer does.
     */
    public MetadataPositionStore(MetadataStore store, String managedLedgerName, String cursorName, String logName,
                                 int chunkBytes, ChunkReads chunkReads,
                                 Supplier<CompletableFuture<Boolean>> ownsTopic) {
        this.ownership = new TopicOwnership(ownsTopic);
        this.store = store;
        this.path = PositionNodes.positions(managedLedgerName, cursorName);
        this.cursorPath = PositionNodes.cursorNode(managedLedgerName, cursorName);
        this.name = logName;
        this.chunkBytes = chunkBytes;
        this.chunkReads = chunkReads;
    }

    public String path() {
        return path;
    }

    @Override
    public synchronized boolean isFenced() {
        return fenced || deleted; // either way no save lands here any more (a review, forty-fifth session)
    }

    @Override
    public CompletableFuture<Loaded> load() {
        return store.get(cursorPath).thenCompose(cursor -> chunkReads.read(() -> store.get(path)).thenCompose(head -> {
            noteCursor(cursor);
            if (head.isEmpty()) {
                return takeOver(-1, emptyHead(), 0).thenApply(v -> new Loaded(null, null, 0, false));
            }
            if (cursor.isPresent() && PositionNodes.predates(head.get().getStat(), cursor.get().getStat())) {
                log.info("{} The saved consumer positions predate the subscription's managed cursor: they are an"
                        + " earlier subscription's of this name (deleted since), not this one's; discarded", name);
                return discard().thenApply(v -> new Loaded(null, null, 0, false));
            }
            return SnapshotReads.read(store, chunkReads, path, head.get())
                    .thenCompose(loaded -> takeOverHead(head.get()).thenApply(v -> loaded));
        }));
    }

    /**
     * The head as it is, with this store's writer id in it (an unreadable head is replaced by an empty one). Its save
     * time loses the mark of a save made on close: the consumers this broker attaches are not in that save, so a
     * broker that loads it after this one crashed must open its recovery window for them.
     */
    private CompletableFuture<Void> takeOverHead(GetResult head) {
        byte[] rewritten = PositionHead.takenOver(head.getValue(), writerId);
        return takeOver(head.getStat().getVersion(), rewritten, PositionHead.slotOf(rewritten));
    }

    /**
     * Before the first write of a store whose {@link #discard} (or, in tests, {@link #load}) failed before it took the
     * head over:
     * takes the head over as it is now, so that the write is conditional on it (without this, the write would ask to
     * create a head that exists, fail, and fence this broker for as long as it owns the topic), while this broker owns
     * the topic; otherwise stands down.
     */
    private CompletableFuture<Void> takeOverNow() {
        return chunkReads.read(() -> store.get(path)).thenCompose(head -> {
            if (head.isEmpty()) {
                return takeOver(-1, emptyHead(), 0);
            }
            if (PositionHead.writerOf(head.get().getValue()) == writerId) {
                return takeOverHead(head.get());
            }
            // Another store's head: its new owner's, when this broker no longer owns the topic, and taking it over
            // would stop the new owner's saves (a review, twenty-ninth session), or wipe the previous owner's snapshot
            // before the new owner reads it (the replacement after a failed load; a review, thirtieth session): stand
            // down. While it owns the topic (serves it, or still holds its bundle while closing it), the other store is
            // the previous owner's or a stale one (an orphaned installation, a late save of the previous owner), which
            // its next write finds; when ownership cannot be told, as before.
            return ownership.orUnknown().thenCompose(owns -> {
                if (owns) {
                    return takeOverHead(head.get());
                }
                synchronized (this) {
                    fenced = true;
                }
                log.warn("{} The saved consumer positions are another store's, and this broker no longer owns the"
                        + " topic: it does not save them", name);
                return CompletableFuture.<Void>completedFuture(null);
            });
        });
    }

    private synchronized void noteCursor(Optional<GetResult> cursor) {
        cursorCreated = cursor.map(c -> c.getStat().getCreationTimestamp()).orElse(0L);
    }

    /** Whether {@code cursor} is the cursor node {@link #noteCursor} saw (not one created again since). */
    private synchronized boolean sameCursor(Optional<GetResult> cursor) {
        return cursorCreated > 0 && cursor.map(c -> c.getStat().getCreationTimestamp() == cursorCreated).orElse(false);
    }

    private byte[] emptyHead() {
        return PositionHead.empty(writerId);
    }

    /** Writes {@code head} over the version seen: a writer that saw the old version is now fenced. */
    private CompletableFuture<Void> takeOver(long seenVersion, byte[] head, int headSlot) {
        return store.put(path, head, Optional.of(seenVersion)).thenAccept(stat -> {
            synchronized (this) {
                version = stat.getVersion();
                slot = headSlot;
            }
        });
    }

    @Override
    public CompletableFuture<Void> discard() {
        return store.get(cursorPath).thenAccept(this::noteCursor)
                .thenCompose(v -> HeadRemoval.deleteAll(store, path)).thenCompose(v -> takeOver(-1, emptyHead(), 0));
    }

    @Override
    public CompletableFuture<Void> save(List<SavedPosition> positions, JoinFloor joinFloor, boolean onClose) {
        byte[] snapshot = SnapshotCodec.encode(positions, joinFloor);
        if (snapshot.length > PositionHead.MAX_SNAPSHOT_BYTES
                || (snapshot.length + (long) chunkBytes - 1) / chunkBytes > PositionHead.MAX_CHUNKS) {
            return CompletableFuture.failedFuture(new IllegalStateException("a snapshot of " + snapshot.length
                    + " bytes (" + positions.size() + " consumers) is above what a load reads back (at most "
                    + PositionHead.MAX_SNAPSHOT_BYTES + " bytes in " + PositionHead.MAX_CHUNKS + " chunks)"));
        }
        // The save time, negated for the save made on close (a graceful move): one field, no format change.
        long savedAt = onClose ? -System.currentTimeMillis() : System.currentTimeMillis();
        return chain(() -> write(snapshot, savedAt));
    }

    @Override
    public CompletableFuture<Void> delete() {
        synchronized (this) {
            deleted = true;
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        synchronized (this) {
            tail = tail.handle((v, e) -> null).thenCompose(v -> HeadRemoval.deleteOwn(store, path, writerId, name))
                    .whenComplete((v, e) -> complete(done, e));
        }
        return done;
    }

    private static void complete(CompletableFuture<Void> done, Throwable e) {
        if (e == null) {
            done.complete(null);
        } else {
            done.completeExceptionally(e);
        }
    }

    private synchronized CompletableFuture<Void> chain(java.util.function.Supplier<CompletableFuture<Void>> op) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        tail = tail.handle((v, e) -> null).thenCompose(v -> op.get()).whenComplete((v, e) -> complete(done, e));
        return done;
    }

    private CompletableFuture<Void> write(byte[] snapshot, long savedAt) {
        return write(snapshot, savedAt, false);
    }

    /**
     * One save. A chunked one first reads the head ({@code headRead} then true): chunks are written unconditionally,
     * so a writer that lost the topic (a broker paused past its session) would otherwise write its chunks into the
     * slot the new owner's head points to before its own head write failed, and the new owner's snapshot would no
     * longer load (regression, forty-third session). Reading first, such a writer finds the other head and stops; what
     * is left is a writer paused again between that read and its chunk writes.
     */
    private CompletableFuture<Void> write(byte[] snapshot, long savedAt, boolean headRead) {
        long expected;
        int nextSlot;
        synchronized (this) {
            if (fenced || deleted) {
                // Skipped: a failure but for the save on close (savedAt < 0), so that a reset whose save comes after
                // the fencing does not answer success with nothing saved (a review, forty-fifth session).
                return savedAt < 0 ? CompletableFuture.completedFuture(null) : CompletableFuture.failedFuture(
                        new NotSaved(fenced ? "another broker has taken the saved positions over"
                                : "the saved positions were deleted"));
            }
            if (version < 0) { // not taken over yet
                return takeOverNow().thenCompose(v -> write(snapshot, savedAt, true));
            }
            if (headUnknown) {
                return refreshHead().thenCompose(v -> write(snapshot, savedAt, true));
            }
            if (!headRead && snapshot.length > chunkBytes) {
                return refreshHead(true).thenCompose(v -> write(snapshot, savedAt, true));
            }
            expected = version;
            nextSlot = 1 - slot;
        }
        if (snapshot.length <= chunkBytes) {
            return putHead(PositionHead.encode(writerId, nextSlot, 0, snapshot.length, 0, savedAt, snapshot), expected,
                    nextSlot);
        }
        List<CompletableFuture<?>> puts = new ArrayList<>();
        int chunks = 0;
        for (int off = 0; off < snapshot.length; off += chunkBytes, chunks++) {
            byte[] chunk = java.util.Arrays.copyOfRange(snapshot, off, Math.min(snapshot.length, off + chunkBytes));
            puts.add(store.put(PositionNodes.chunk(path, nextSlot, chunks), chunk, Optional.empty()));
        }
        byte[] head = PositionHead.encode(writerId, nextSlot, chunks, snapshot.length, PositionHead.crc(snapshot),
                savedAt, new byte[0]);
        return CompletableFuture.allOf(puts.toArray(new CompletableFuture[0]))
                .thenCompose(v -> putHead(head, expected, nextSlot));
    }

    private CompletableFuture<Void> putHead(byte[] head, long expected, int newSlot) {
        return store.put(path, head, Optional.of(expected)).handle((stat, e) -> {
            synchronized (this) {
                if (e == null) {
                    version = stat.getVersion();
                    slot = newSlot;
                    return null;
                }
                headUnknown = true;
            }
            Throwable cause = FutureUtil.unwrapCompletionException(e);
            if (cause instanceof BadVersionException || cause instanceof NotFoundException) {
                refreshHead(); // now, to stop early when fenced or deleted
            }
            throw FutureUtil.wrapToCompletionException(cause);
        });
    }

    /**
     * Reads the head (after a conditional write failed: another writer, or the head deleted): fenced when another
     * writer's, otherwise its version and slot are this store's again ({@link #headUnknown} cleared); when gone, see
     * {@link #headGone}. Fails, leaving the head unknown, when the read fails.
     */
    private CompletableFuture<Void> refreshHead() {
        return refreshHead(false);
    }

    /** {@link #refreshHead()}; {@code beforeChunks}: a chunked save's check, read in its own queue. */
    private CompletableFuture<Void> refreshHead(boolean beforeChunks) {
        Supplier<CompletableFuture<Optional<GetResult>>> get = () -> store.get(path);
        return (beforeChunks ? chunkReads.headCheck(get) : chunkReads.read(get)).thenCompose(head -> {
            if (head.isEmpty()) {
                return headGone();
            }
            synchronized (this) {
                if (head.get().getValue().length < PositionHead.BYTES
                        || PositionHead.rawWriter(head.get().getValue()) != writerId) {
                    fenced = true;
                    log.warn("{} Another broker has taken over the saved consumer positions (it owns the topic now):"
                            + " this broker stops saving them", name);
                } else {
                    version = head.get().getStat().getVersion();
                    slot = PositionHead.slotOf(head.get().getValue());
                    headUnknown = false;
                }
            }
            return CompletableFuture.<Void>completedFuture(null);
        });
    }

    /**
     * The head was deleted from under this store. While the subscription's own cursor node exists (the one its load
     * or discard read, not one of a subscription or topic created again under its name: a review) and this broker
     * owns the topic, that was an earlier subscription's late removal (its owner's own, {@link
     * HeadRemoval#deleteOwn}, or {@link CursorDeletions}) racing this subscription's creation under the same name:
     * the next write creates the head again. Regression (forty-sixth session): such a store stopped saving for as
     * long as its broker owned the topic. Otherwise the subscription is gone (or no longer this broker's): nothing is
     * saved any more.
     */
    private CompletableFuture<Void> headGone() {
        return store.get(cursorPath)
                .thenCompose(cursor -> sameCursor(cursor) ? ownership.forSure()
                        : CompletableFuture.completedFuture(false))
                .thenAccept(ours -> {
                    synchronized (this) {
                        if (ours && !deleted) {
                            version = -1; // the next write takes the head over again (takeOverNow)
                            headUnknown = false;
                            log.warn("{} The saved consumer positions were deleted from under this subscription (an"
                                    + " earlier one's of its name removed late): the next save writes them again",
                                    name);
                            return;
                        }
                        deleted = true;
                    }
                    log.warn("{} Saved consumer positions were deleted meanwhile (subscription deleted?): not saving"
                            + " them any more on this broker", name);
                });
    }

    @Override
    public String toString() {
        return "MetadataPositionStore{" + path + "}";
    }
}
