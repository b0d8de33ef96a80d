package io.github.pulsarbroadcast.broadcast.positions;

import io.github.pulsarbroadcast.broadcast.positions.PositionStore.Loaded;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.pulsar.metadata.api.GetResult;
import org.apache.pulsar.metadata.api.MetadataStore;

/**
 * Reads the snapshot a head node holds inline or points to in chunk nodes, checking the chunks against the head's
 * length and CRC32, and decodes it: a damaged or implausible snapshot is reported as a problem, never misread.
 *
 * <p>Threading: stateless; any thread (the metadata store answers asynchronously).
 */
final class SnapshotReads {

    private SnapshotReads() {
    }

    /** The snapshot {@code head} (the head node at {@code path}) holds or points to. */
    static CompletableFuture<Loaded> read(MetadataStore store, ChunkReads chunkReads, String path, GetResult head) {
        PositionHead.Fields h = PositionHead.parse(head.getValue());
        if (h == null) {
            return CompletableFuture.completedFuture(new Loaded(null, "head node is not in format 1", 0, false));
        }
        if (h.chunks == 0 && h.inline.length == 0) {
            // The empty head a load or discard writes: nothing was saved since, which is no damage (a review).
            return CompletableFuture.completedFuture(new Loaded(null, null, 0, false));
        }
        if (h.chunks == 0) {
            return CompletableFuture.completedFuture(decode(h.inline, h.savedAt));
        }
        String implausible = h.implausible();
        if (implausible != null) {
            // A damaged head (it has no checksum of its own) must not start millions of reads or a huge allocation.
            return CompletableFuture.completedFuture(new Loaded(null, implausible, 0, false));
        }
        int length = h.length;
        // One at a time (ChunkReads), heads too: read together, they come back as one response above ZooKeeper's limit.
        List<CompletableFuture<Optional<GetResult>>> reads = new ArrayList<>();
        for (int i = 0; i < h.chunks; i++) {
            String chunkPath = PositionNodes.chunk(path, h.slot, i);
            reads.add(chunkReads.read(() -> store.get(chunkPath)));
        }
        return CompletableFuture.allOf(reads.toArray(new CompletableFuture[0])).thenApply(v -> {
            // What was read is summed before anything is allocated: the head's length is only a claim (a review).
            long read = 0;
            for (CompletableFuture<Optional<GetResult>> r : reads) {
                Optional<GetResult> chunk = r.join();
                if (chunk.isEmpty()) {
                    return new Loaded(null, "chunk missing", 0, false);
                }
                read += chunk.get().getValue().length;
            }
            if (read != length) {
                return new Loaded(null, "chunks do not match the head (length or CRC)", 0, false);
            }
            ByteBuffer all = ByteBuffer.allocate(length);
            for (CompletableFuture<Optional<GetResult>> r : reads) {
                all.put(r.join().get().getValue());
            }
            if (all.hasRemaining() || PositionHead.crc(all.array()) != h.crc) {
                return new Loaded(null, "chunks do not match the head (length or CRC)", 0, false);
            }
            return decode(all.array(), h.savedAt);
        });
    }

    private static Loaded decode(byte[] bytes, long savedAt) {
        try {
            SnapshotCodec.Snapshot snapshot = SnapshotCodec.decodeSnapshot(bytes);
            return new Loaded(snapshot.positions, snapshot.joinFloor, null, Math.abs(savedAt), savedAt < 0);
        } catch (SnapshotCodec.CorruptSnapshotException e) {
            return new Loaded(null, e.getMessage(), 0, false);
        }
    }
}
