package io.github.pulsarbroadcast.broadcast.positions;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertNull;
import static org.testng.Assert.assertTrue;
import static org.testng.Assert.expectThrows;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.apache.pulsar.metadata.api.MetadataStore;
import org.apache.pulsar.metadata.api.MetadataStoreException;
import org.apache.pulsar.metadata.api.Stat;
import org.apache.pulsar.metadata.api.extended.MetadataStoreExtended;
import org.apache.pulsar.metadata.impl.FaultInjectionMetadataStore;
import org.testng.annotations.Test;

/**
 * The metadata-store position store over Pulsar's in-memory metadata store (the same API as ZooKeeper's): inline and
 * chunked snapshots, a new owner fencing the old one, damaged chunks falling back (never misread), delete, and the
 * mapping from a stock cursor node to ours.
 */
public class MetadataPositionStoreTest extends InMemoryMetadata {

    /** Removes whatever is saved, as the cursor-deletion listener does. */
    private void clear() throws Exception {
        metadata.deleteRecursive(store(metadata, 100).path()).get();
    }

    private MetadataPositionStore store(MetadataStore m, int chunkBytes) {
        return new MetadataPositionStore(m, "t/ns/persistent/topic", "fleet", "[t][fleet]", chunkBytes);
    }

    /** A save {@code store} skips (it stands down) fails with {@link PositionStore.NotSaved}. */
    private static void assertNotSaved(MetadataPositionStore store) {
        ExecutionException e = expectThrows(ExecutionException.class, () -> store.save(List.of(), null, false).get());
        assertTrue(e.getCause() instanceof PositionStore.NotSaved, e.toString());
    }

    private static List<SavedPosition> positions(int n, long entry) {
        List<SavedPosition> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(new SavedPosition("vehicle-" + i, 3, entry + i % 7, i % 5 == 0 ? new long[] {3, 100, 104} : null,
                    i % 3 == 0 ? 1_700_000_000_000L + i : 0));
        }
        return out;
    }

    @Test(groups = "unit", timeOut = 60_000)
    public void inlineAndChunkedSnapshotsComeBack() throws Exception {
        for (int chunk : new int[] {MetadataPositionStore.DEFAULT_CHUNK_BYTES, 100}) {
            MetadataPositionStore writer = store(metadata, chunk);
            assertFalse(writer.load().get().found(), "nothing saved yet");
            writer.save(positions(500, 10), null, false).get();
            writer.save(positions(300, 20), null, false).get(); // the second goes to the other slot
            PositionStore.Loaded loaded = store(metadata, chunk).load().get();
            assertEquals(loaded.positions, SnapshotCodec.decode(SnapshotCodec.encode(positions(300, 20))));
            assertFalse(loaded.savedOnClose, "a periodic save");
            MetadataPositionStore closer = store(metadata, chunk);
            closer.load().get();
            closer.save(positions(10, 30), null, true).get();
            assertTrue(store(metadata, chunk).load().get().savedOnClose, "the save on close");
            clear(); // a store removes only what it wrote (deleteOwn)
        }
    }

    @Test(groups = "unit", timeOut = 60_000)
    public void aNewOwnerFencesTheOldOne() throws Exception {
        MetadataPositionStore old = store(metadata, 100);
        old.load().get();
        old.save(positions(50, 1), null, false).get();
        MetadataPositionStore owner = store(metadata, 100);
        assertEquals(owner.load().get().positions.size(), 50);
        expectThrows(ExecutionException.class, () -> old.save(positions(50, 2), null, false).get()); // conditional
        org.awaitility.Awaitility.await().until(old::isFenced);
        // A save the fenced store skips fails, so that a reset does not answer success with nothing saved (a review,
        // forty-fifth session: it completed as if saved); the one on close has nothing to do.
        ExecutionException skipped = expectThrows(ExecutionException.class,
                () -> old.save(positions(50, 4), null, false).get());
        assertTrue(skipped.getCause() instanceof PositionStore.NotSaved, skipped.toString());
        old.save(positions(50, 4), null, true).get();
        owner.save(positions(50, 3), null, false).get();
        assertFalse(owner.isFenced());
        assertEquals(store(metadata, 100).load().get().positions.get(0).ackedEntry(), 3);
    }

    /**
     * A broker that lost the topic (paused past its session) and saves again does not write its chunks into the slot
     * the new owner's head points to: the new owner's snapshot stays readable. Regression (forty-third session, left
     * by the forty-second): the stale writer's chunks replaced the live ones, and the next load found "chunks do not
     * match the head" and fell back to the recovery window (consumers away longer lost their positions).
     */
    @Test(groups = "unit", timeOut = 60_000)
    public void aStaleWriterDoesNotWriteItsChunksIntoTheNewOwnersSlot() throws Exception {
        MetadataPositionStore stale = store(metadata, 100);
        stale.load().get();
        stale.save(positions(50, 1), null, false).get(); // the stale writer's head points to one slot
        MetadataPositionStore owner = store(metadata, 100);
        owner.load().get();
        owner.save(positions(50, 2), null, false).get(); // the owner's head points to the other one
        // Into the slot it thinks is free, the owner's: it reads the head first and stands down.
        expectThrows(ExecutionException.class, () -> stale.save(positions(50, 9), null, false).get());
        PositionStore.Loaded loaded = store(metadata, 100).load().get();
        assertTrue(loaded.found(), "the owner's snapshot is readable: " + loaded);
        assertEquals(loaded.positions.get(0).ackedEntry(), 2);
        assertTrue(stale.isFenced());
    }

    /**
     * Regression (twenty-sixth session's review): a broker that took over a head saved on close left the mark in it,
     * so a broker loading after that one crashed (before its first save) opened no recovery window, and a consumer
     * that had joined the crashed broker resumed at the tail: loss.
     */
    @Test(groups = "unit", timeOut = 60_000)
    public void aTakenOverHeadNoLongerSaysSavedOnClose() throws Exception {
        for (int chunk : new int[] {MetadataPositionStore.DEFAULT_CHUNK_BYTES, 100}) {
            MetadataPositionStore closer = store(metadata, chunk);
            closer.load().get();
            closer.save(positions(40, 7), null, true).get();
            PositionStore.Loaded moved = store(metadata, chunk).load().get(); // the new owner after a graceful move
            assertTrue(moved.savedOnClose, "the new owner sees the save on close");
            PositionStore.Loaded afterCrash = store(metadata, chunk).load().get(); // the next one, after a crash
            assertFalse(afterCrash.savedOnClose, "taken over since: not a description of the consumers any more");
            assertEquals(afterCrash.savedAtMillis, moved.savedAtMillis, "the save's time is kept");
            assertEquals(afterCrash.positions, moved.positions);
            clear(); // a store removes only what it wrote (deleteOwn)
        }
    }

    /**
     * design.md, "Durable consumer positions": a chunked save writes its chunks into the slot the head does not name
     * and the head last, so a broker that dies between the two (here: the head write fails) leaves the previous
     * snapshot whole and readable, never a mix of the two.
     */
    @Test(groups = "unit", timeOut = 60_000)
    public void aSaveWhoseHeadWriteFailsLeavesThePreviousSnapshotReadable() throws Exception {
        FaultInjectionMetadataStore faulty = new FaultInjectionMetadataStore(metadata);
        MetadataPositionStore owner = store(faulty, 100);
        owner.load().get();
        owner.save(positions(200, 5), null, false).get();
        faulty.failConditional(new MetadataStoreException("injected: the broker died before its head write"),
                (op, path) -> op == FaultInjectionMetadataStore.OperationType.PUT && path.equals(owner.path()));
        expectThrows(ExecutionException.class, () -> owner.save(positions(150, 9), null, false).get());
        assertEquals(store(metadata, 100).load().get().positions,
                SnapshotCodec.decode(SnapshotCodec.encode(positions(200, 5))), "the previous snapshot, whole");
        clear(); // a store removes only what it wrote (deleteOwn)
    }

    /**
     * A head write that ZooKeeper applied but reported as failed (its connection was lost after the write): the store
     * must not trust its version and slot. Regression (forty-second session, a review): the next chunked save wrote
     * its chunks into the slot the live head pointed at, and its head write then failed (bad version), so the head
     * described chunks that were no longer its own: the snapshot was unreadable and the positions fell back.
     */
    @Test(groups = "unit", timeOut = 60_000)
    public void aHeadWriteAppliedButReportedFailedLeavesTheSavesReadable() throws Exception {
        AppliedThenFailed faulty = new AppliedThenFailed(metadata);
        MetadataPositionStore owner = store(faulty, 100);
        owner.load().get();
        owner.save(positions(200, 5), null, false).get();
        faulty.failNextPutAfterApplying(owner.path());
        expectThrows(ExecutionException.class, () -> owner.save(positions(150, 9), null, false).get());
        owner.save(positions(180, 3), null, false).get(); // failed before the fix: bad version, after its chunks
        assertEquals(store(metadata, 100).load().get().positions,
                SnapshotCodec.decode(SnapshotCodec.encode(positions(180, 3))), "the next save, whole");
        clear(); // a store removes only what it wrote (deleteOwn)
    }

    /** A metadata store whose next put to one path is applied and then reported as failed (a connection loss). */
    private static final class AppliedThenFailed extends FaultInjectionMetadataStore {
        private volatile String failing;

        AppliedThenFailed(MetadataStoreExtended store) {
            super(store);
        }

        void failNextPutAfterApplying(String path) {
            failing = path;
        }

        @Override
        public CompletableFuture<Stat> put(String path, byte[] value, Optional<Long> expectedVersion) {
            CompletableFuture<Stat> put = super.put(path, value, expectedVersion);
            if (!path.equals(failing)) {
                return put;
            }
            failing = null;
            return put.thenCompose(applied -> CompletableFuture.failedFuture(
                    new MetadataStoreException("injected: the connection was lost after the write")));
        }
    }

    /**
     * Regression (twenty-sixth session's review): a load that failed left the store without the head's version, so
     * its first save asked to create the head, failed, and fenced the owning broker for as long as it owned the
     * topic (no save, not even on close); a chunked save could also overwrite the chunks of the snapshot in place.
     */
    @Test(groups = "unit", timeOut = 60_000)
    public void aFailedLoadDoesNotFenceTheOwner() throws Exception {
        for (FaultInjectionMetadataStore.OperationType failing : new FaultInjectionMetadataStore.OperationType[] {
                FaultInjectionMetadataStore.OperationType.GET, FaultInjectionMetadataStore.OperationType.PUT}) {
            MetadataPositionStore previous = store(metadata, 100);
            previous.load().get();
            previous.save(positions(200, 5), null, false).get();
            FaultInjectionMetadataStore faulty = new FaultInjectionMetadataStore(metadata);
            MetadataPositionStore owner = store(faulty, 100);
            faulty.failConditional(new MetadataStoreException("injected"),
                    (op, path) -> op == failing && path.equals(owner.path()));
            expectThrows(ExecutionException.class, () -> owner.load().get());
            owner.save(positions(150, 9), null, false).get();
            assertFalse(owner.isFenced(), "after " + failing + " failed");
            assertEquals(store(metadata, 100).load().get().positions,
                    SnapshotCodec.decode(SnapshotCodec.encode(positions(150, 9))), "after " + failing + " failed");
            clear(); // a store removes only what it wrote (deleteOwn)
        }
    }

    /**
     * Regression (twenty-ninth session, a review): a store whose load read the previous owner's head but whose
     * take-over failed (here injected; in life another loader won the race) took the head over before its first
     * write, whatever stood in it by then: when that was a newer owner's head, the stale store fenced the owner,
     * whose saves then stopped for as long as it owned the topic. A store of a topic this broker no longer serves
     * now stands down when another store took the head over after its load read it.
     */
    @Test(groups = "unit", timeOut = 60_000)
    public void aStaleStoreDoesNotTakeTheHeadBackFromANewerOwner() throws Exception {
        MetadataPositionStore stale = storeWhoseLoadFails(false);
        MetadataPositionStore owner = store(metadata, 100);
        owner.load().get();
        owner.save(positions(150, 9), null, false).get();
        stale.save(positions(150, 2), null, true).get();
        assertTrue(stale.isFenced(), "the stale store stands down");
        owner.save(positions(150, 11), null, false).get();
        assertFalse(owner.isFenced(), "the owner keeps saving");
        assertEquals(store(metadata, 100).load().get().positions.get(0).ackedEntry(), 11);
    }

    /**
     * The other side of {@link #aStaleStoreDoesNotTakeTheHeadBackFromANewerOwner}: while this broker serves the topic,
     * a store whose take-over failed takes over a head another store took over since its load read it (an orphaned
     * installation elsewhere, or a late save of the previous owner that took the head over first), which then
     * stands down at its next write.
     */
    @Test(groups = "unit", timeOut = 60_000)
    public void anOwnerWhoseTakeOverFailedTakesTheHeadFromAStaleStore() throws Exception {
        MetadataPositionStore owner = storeWhoseLoadFails(true);
        MetadataPositionStore orphan = store(metadata, 100);
        orphan.load().get();
        owner.save(positions(150, 9), null, false).get();
        assertFalse(owner.isFenced(), "the owner saves");
        // Small enough for the head itself (a stale writer's chunks could damage the owner's: class doc); the
        // conditional head write fails.
        expectThrows(ExecutionException.class, () -> orphan.save(positions(1, 2), null, false).get());
        org.awaitility.Awaitility.await().until(orphan::isFenced);
        assertEquals(store(metadata, 100).load().get().positions.get(0).ackedEntry(), 9);
    }

    /**
     * Regression (thirtieth session, a review): after a failed load the installer replaces what the store holds
     * before the subscription starts. A store whose load read nothing (its read of the head failed) took over
     * whatever head stood there by then without asking whether this broker still owns the topic: when that was a newer
     * owner's head, it stopped the owner's saves for as long as it owned the topic.
     */
    @Test(groups = "unit", timeOut = 60_000)
    public void aStoreWhoseLoadReadNothingDoesNotTakeANewerOwnersHead() throws Exception {
        MetadataPositionStore stale = storeWhoseLoadFails(false, FaultInjectionMetadataStore.OperationType.GET);
        MetadataPositionStore owner = store(metadata, 100);
        owner.load().get();
        owner.save(positions(150, 9), null, false).get();
        assertNotSaved(stale); // since the forty-fifth session a skipped save fails
        assertTrue(stale.isFenced(), "the stale store stands down");
        owner.save(positions(150, 11), null, false).get();
        assertFalse(owner.isFenced(), "the owner keeps saving");
        assertEquals(store(metadata, 100).load().get().positions.get(0).ackedEntry(), 11);
    }

    /**
     * Regression (thirtieth session, a review): a store whose load read the previous owner's head, on a broker that
     * lost the topic before the new owner loaded it, took that head over at its replacement after the failed load and
     * wiped the previous owner's snapshot: the new owner then restored nothing.
     */
    @Test(groups = "unit", timeOut = 60_000)
    public void aStoreOfATopicThisBrokerNoLongerOwnsLeavesThePreviousOwnersSnapshot() throws Exception {
        MetadataPositionStore stale = storeWhoseLoadFails(false, FaultInjectionMetadataStore.OperationType.PUT);
        assertNotSaved(stale);
        assertTrue(stale.isFenced(), "the stale store stands down");
        assertEquals(store(metadata, 100).load().get().positions.size(), 200, "the previous owner's snapshot");
    }

    /**
     * An ownership check that throws (rather than fail its future) counts as "cannot be told", as a failed one does:
     * the store takes the head over as it did before ownership was asked (a review, thirtieth session, found the
     * exception failed the save instead).
     */
    @Test(groups = "unit", timeOut = 60_000)
    public void anOwnershipCheckThatThrowsCountsAsUnknown() throws Exception {
        MetadataPositionStore store = storeWhoseLoadFails(() -> {
            throw new IllegalStateException("simulated: no bundle for the topic");
        }, FaultInjectionMetadataStore.OperationType.PUT);
        store.save(positions(150, 9), null, false).get();
        assertFalse(store.isFenced());
        assertEquals(store(metadata, 100).load().get().positions.get(0).ackedEntry(), 9);
    }

    /** As below, the injected failure in the load's one write. */
    private MetadataPositionStore storeWhoseLoadFails(boolean ownsTopic) throws Exception {
        return storeWhoseLoadFails(ownsTopic, FaultInjectionMetadataStore.OperationType.PUT);
    }

    private MetadataPositionStore storeWhoseLoadFails(boolean ownsTopic, FaultInjectionMetadataStore.OperationType
            failing) throws Exception {
        return storeWhoseLoadFails(() -> java.util.concurrent.CompletableFuture.completedFuture(ownsTopic), failing);
    }

    /**
     * A previous owner's saved head; then a store whose load fails, on a broker that owns the topic or no longer does:
     * an injected failure of its read of the head ({@code GET}: it read nothing) or of its one write ({@code PUT}: it
     * read the head and failed to take it over).
     */
    private MetadataPositionStore storeWhoseLoadFails(
            java.util.function.Supplier<java.util.concurrent.CompletableFuture<Boolean>> ownsTopic,
            FaultInjectionMetadataStore.OperationType failing) throws Exception {
        MetadataPositionStore previous = store(metadata, 100);
        previous.load().get();
        previous.save(positions(200, 5), null, false).get();
        FaultInjectionMetadataStore faulty = new FaultInjectionMetadataStore(metadata);
        MetadataPositionStore store = new MetadataPositionStore(faulty, "t/ns/persistent/topic", "fleet", "[t][fleet]",
                100, new ChunkReads(), ownsTopic);
        faulty.failConditional(new MetadataStoreException("injected"),
                (op, path) -> op == failing && path.equals(store.path()));
        expectThrows(ExecutionException.class, () -> store.load().get());
        return store;
    }

    @Test(groups = "unit", timeOut = 60_000)
    public void aDamagedChunkIsReportedNotMisread() throws Exception {
        MetadataPositionStore writer = store(metadata, 100);
        writer.load().get();
        writer.save(positions(200, 5), null, false).get();
        String chunk = writer.path() + "/" + metadata.getChildren(writer.path()).get().get(0);
        byte[] bytes = metadata.get(chunk).get().orElseThrow().getValue();
        bytes[bytes.length / 2] ^= 1;
        metadata.put(chunk, bytes, Optional.empty()).get();
        PositionStore.Loaded loaded = store(metadata, 100).load().get();
        assertNull(loaded.positions);
        assertTrue(loaded.problem.contains("CRC") || loaded.problem.contains("checksum"), loaded.problem);
    }

    /** A damaged head that names absurd chunk counts or sizes is reported, without reading or allocating them. */
    @Test(groups = "unit", timeOut = 60_000)
    public void aHeadWithAbsurdChunksIsReportedNotRead() throws Exception {
        MetadataPositionStore writer = store(metadata, 100);
        // {1, 1 << 30}: one chunk claiming 1 GiB, allocated before the chunk was read (a review, forty-fifth session).
        for (int[] chunksAndLength : new int[][] {{100_000, 200_000}, {-1, 10}, {5, 2}, {1, Integer.MAX_VALUE},
            {1, 1 << 30}, {10_000, 20_000}}) {
            byte[] head = java.nio.ByteBuffer.allocate(36).putInt(0x50424801).putLong(7).putInt(0)
                    .putInt(chunksAndLength[0]).putInt(chunksAndLength[1]).putInt(0).putLong(1).array();
            metadata.put(writer.path(), head, Optional.empty()).get();
            PositionStore.Loaded loaded = store(metadata, 100).load().get();
            assertNull(loaded.positions);
            assertTrue(loaded.problem.contains("chunks") && loaded.problem.contains("at most"), loaded.problem);
        }
    }

    /**
     * A head whose chunks hold fewer bytes than it claims is reported; since the forty-fifth session without
     * allocating what it claims (a review: the buffer was allocated before the chunks were checked; the outcome was
     * the same, so this pins the outcome only).
     */
    @Test(groups = "unit", timeOut = 60_000)
    public void aHeadClaimingMoreBytesThanItsChunksHoldIsReported() throws Exception {
        MetadataPositionStore writer = store(metadata, 100);
        writer.load().get();
        writer.save(positions(200, 5), null, false).get();
        byte[] head = metadata.get(writer.path()).get().orElseThrow().getValue();
        java.nio.ByteBuffer.wrap(head).putInt(20, 200 << 20); // the length field: 200 MiB, under the bound
        metadata.put(writer.path(), head, Optional.empty()).get();
        PositionStore.Loaded loaded = store(metadata, 100).load().get();
        assertNull(loaded.positions);
        assertTrue(loaded.problem.contains("do not match the head"), loaded.problem);
    }

    /**
     * The empty head a load writes is "nothing saved", not damage: after a crash before the first save the next owner
     * said the positions were unreadable (a review, forty-fifth session: "not a broadcast positions snapshot").
     */
    @Test(groups = "unit", timeOut = 60_000)
    public void anEmptyHeadMeansNothingSaved() throws Exception {
        store(metadata, 100).load().get(); // writes the empty head, then "crashes"
        PositionStore.Loaded loaded = store(metadata, 100).load().get();
        assertFalse(loaded.found());
        assertNull(loaded.problem, "nothing saved is no problem");
    }

    /** A save a load could not read back is refused, with the numbers. */
    @Test(groups = "unit", timeOut = 60_000)
    public void aSnapshotAboveTheLoadsBoundsIsRefused() throws Exception {
        MetadataPositionStore writer = store(metadata, 10);
        writer.load().get();
        ExecutionException refused = expectThrows(ExecutionException.class,
                () -> writer.save(positions(10_000, 5), null, false).get());
        assertTrue(refused.getCause().getMessage().contains("above what a load reads back"), refused.toString());
    }

    /**
     * A store whose head was deleted from under it (a cursor deletion applied but reported failed, so the
     * subscription stays) says that no save lands: otherwise the subscription tried every interval, and refused new
     * consumer names for good after a reset or reopen, waiting for a save that could never work (a review,
     * forty-fifth session).
     */
    @Test(groups = "unit", timeOut = 60_000)
    public void aStoreWhoseHeadWasDeletedFromUnderItSaysNoSaveLands() throws Exception {
        MetadataPositionStore owner = store(metadata, 100);
        owner.load().get();
        owner.save(positions(20, 5), null, false).get();
        metadata.deleteRecursive(owner.path()).get();
        expectThrows(ExecutionException.class, () -> owner.save(positions(20, 6), null, false).get());
        org.awaitility.Awaitility.await().until(owner::isFenced);
        assertNotSaved(owner);
    }

    @Test(groups = "unit", timeOut = 60_000)
    public void deleteRemovesEverythingAndStopsSaving() throws Exception {
        MetadataPositionStore writer = store(metadata, 100);
        writer.load().get();
        writer.save(positions(200, 5), null, false).get();
        writer.delete().get();
        assertFalse(metadata.exists(writer.path()).get());
        ExecutionException skipped = expectThrows(ExecutionException.class,
                () -> writer.save(positions(10, 5), null, false).get());
        assertTrue(skipped.getCause() instanceof PositionStore.NotSaved, "a skipped save fails: " + skipped);
        writer.save(positions(10, 5), null, true).get();
        assertFalse(metadata.exists(writer.path()).get(), "a save after delete writes nothing");
    }

    @Test(groups = "unit", timeOut = 60_000)
    public void ourPathMirrorsTheStockCursorNode() {
        assertEquals(PositionNodes.forCursorNode("/managed-ledgers/t/ns/persistent/topic/fleet"),
                PositionNodes.ROOT + "/t/ns/persistent/topic/fleet");
        assertNull(PositionNodes.forCursorNode("/managed-ledgers/t/ns/persistent/topic"));
        assertNull(PositionNodes.forCursorNode("/admin/policies/t/ns"));
        assertEquals(store(metadata, 100).path(), PositionNodes.ROOT + "/t/ns/persistent/topic/fleet");
    }
}
