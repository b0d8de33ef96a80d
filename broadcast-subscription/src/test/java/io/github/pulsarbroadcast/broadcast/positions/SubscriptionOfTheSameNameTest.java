package io.github.pulsarbroadcast.broadcast.positions;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertNull;
import static org.testng.Assert.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.apache.pulsar.metadata.api.GetResult;
import org.apache.pulsar.metadata.api.extended.MetadataStoreExtended;
import org.apache.pulsar.metadata.impl.FaultInjectionMetadataStore;
import org.apache.pulsar.metadata.impl.FaultInjectionMetadataStore.OperationType;
import org.testng.annotations.Test;

/**
 * A subscription deleted and created again under the same name (an operator's unsubscribe, and devices that
 * resubscribe at once), over Pulsar's in-memory metadata store: the new subscription neither resumes its consumers
 * from the earlier one's saved positions nor loses its own to the earlier one's late clean-up ({@link
 * CursorDeletions}, {@link MetadataPositionStore#load}).
 */
public class SubscriptionOfTheSameNameTest extends InMemoryMetadata {

    private static final String CURSOR = PositionNodes.MANAGED_LEDGERS + "t/ns/persistent/topic/fleet";

    private MetadataPositionStore store() {
        return new MetadataPositionStore(metadata, "t/ns/persistent/topic", "fleet", "[t][fleet]", 100);
    }

    private static List<SavedPosition> positions(long entry) {
        return List.of(new SavedPosition("vehicle-1", 3, entry, null, 0),
                new SavedPosition("vehicle-2", 3, entry + 1, null, 0));
    }

    /** Creates the subscription's cursor node, after the store's clock has passed every node created so far. */
    private void createCursor() throws Exception {
        long last = metadata.get(PositionNodes.ROOT + "/t/ns/persistent/topic/fleet").get()
                .map(r -> r.getStat().getCreationTimestamp()).orElse(0L);
        await().atMost(Duration.ofSeconds(5)).until(() -> System.currentTimeMillis() > last);
        metadata.put(CURSOR, new byte[] {1}, Optional.of(-1L)).get();
    }

    /**
     * Regression (found by the twenty-sixth session's review, fixed in the twenty-seventh): the notification of the
     * earlier cursor's deletion, handled after the subscription was created again, deleted the new subscription's
     * positions, and its broker stopped saving them (duplicates after the next move).
     */
    @Test(groups = "unit", timeOut = 60_000)
    public void aLateCursorDeletionLeavesTheNewSubscriptionsPositions() throws Exception {
        createCursor();
        MetadataPositionStore earlier = store();
        earlier.load().get();
        earlier.save(positions(5), null, false).get();
        metadata.delete(CURSOR, Optional.empty()).get(); // unsubscribe
        earlier.delete().get(); // the owner's own clean-up
        createCursor(); // a consumer resubscribes at once
        MetadataPositionStore again = store();
        again.discard().get(); // what the installer does for a subscription its subscribe created
        again.save(positions(9), null, false).get();

        assertFalse(new CursorDeletions(metadata).cursorDeleted(CURSOR).get(), "the late notification");

        again.save(positions(11), null, false).get();
        assertFalse(again.isFenced());
        assertEquals(store().load().get().positions, SnapshotCodec.decode(SnapshotCodec.encode(positions(11))),
                "the new subscription's last save, not lost to the earlier one's clean-up");
    }

    /**
     * Regression (twenty-seventh session, a review): the owning broker's own removal after an unsubscribe runs after
     * stock deleted the cursor, and behind any save in progress; a subscription of the same name created meanwhile
     * had written its head, and the removal deleted it (its broker then stopped saving).
     */
    @Test(groups = "unit", timeOut = 60_000)
    public void aLateRemovalByTheEarlierOwnerLeavesTheNewSubscriptionsPositions() throws Exception {
        createCursor();
        MetadataPositionStore earlier = store();
        earlier.load().get();
        earlier.save(positions(5), null, false).get();
        metadata.delete(CURSOR, Optional.empty()).get(); // unsubscribe: stock deletes the cursor first
        createCursor(); // a consumer resubscribes at once
        MetadataPositionStore again = store();
        again.discard().get();
        again.save(positions(9), null, false).get();

        earlier.delete().get(); // the earlier subscription's removal, late

        again.save(positions(11), null, false).get();
        assertFalse(again.isFenced());
        assertEquals(store().load().get().positions, SnapshotCodec.decode(SnapshotCodec.encode(positions(11))));
    }

    @Test(groups = "unit", timeOut = 60_000)
    public void aDeletedCursorsPositionsAreRemoved() throws Exception {
        createCursor();
        MetadataPositionStore owner = store();
        owner.load().get();
        owner.save(positions(5), null, false).get();
        metadata.delete(CURSOR, Optional.empty()).get();
        assertTrue(new CursorDeletions(metadata).cursorDeleted(CURSOR).get());
        assertFalse(metadata.exists(owner.path()).get());
        assertFalse(new CursorDeletions(metadata).cursorDeleted(CURSOR).get(), "nothing left to remove");
    }

    /** The wiring: the store's own notification of the cursor's deletion reaches {@link CursorDeletions}. */
    @Test(groups = "unit", timeOut = 60_000)
    public void theStoresNotificationRemovesThem() throws Exception {
        metadata.registerListener(new CursorDeletions(metadata));
        createCursor();
        MetadataPositionStore owner = store();
        owner.load().get();
        owner.save(positions(5), null, false).get();
        metadata.put(PositionNodes.MANAGED_LEDGERS + "t/ns/persistent/topic", new byte[0], Optional.empty())
                .get(); // a managed-ledger node: not a cursor, nothing happens
        assertTrue(metadata.exists(owner.path()).get());
        metadata.delete(CURSOR, Optional.empty()).get();
        await().atMost(Duration.ofSeconds(10)).until(() -> !metadata.exists(owner.path()).get());
    }

    /**
     * Regression (twenty-seventh session): an earlier subscription's positions that nobody removed (its deletion's
     * notification not yet handled, or lost to a broker restart) were loaded by the new subscription of the same name,
     * whose consumers then resumed after messages the new subscription had never sent them.
     */
    @Test(groups = "unit", timeOut = 60_000)
    public void theNewSubscriptionDoesNotResumeFromTheEarlierOnesPositions() throws Exception {
        createCursor();
        MetadataPositionStore earlier = store();
        earlier.load().get();
        earlier.save(positions(5), null, false).get();
        assertEquals(store().load().get().positions, SnapshotCodec.decode(SnapshotCodec.encode(positions(5))),
                "control: the same subscription on its next owner resumes from them");
        metadata.delete(CURSOR, Optional.empty()).get(); // unsubscribe, never cleaned up
        createCursor();

        MetadataPositionStore again = store();
        PositionStore.Loaded loaded = again.load().get();
        assertNull(loaded.positions, "the earlier subscription's positions");
        again.save(positions(9), null, false).get();
        assertFalse(again.isFenced());
        assertEquals(store().load().get().positions, SnapshotCodec.decode(SnapshotCodec.encode(positions(9))),
                "the new subscription's own, on its next owner");
    }

    /**
     * Regression (forty-sixth session; the forty-fifth's note left it): the earlier subscription's removal by its
     * owner read its own head, a subscription of the same name was created just then (its cursor, its head), and the
     * removal that followed deleted the new head; the new subscription's store then stopped saving for as long as its
     * broker owned the topic (a crash then cost every consumer away its saved position).
     */
    @Test(groups = "unit", timeOut = 60_000)
    public void aRemovalRacingTheNewSubscriptionsCreationDoesNotStopItsSaves() throws Exception {
        createCursor();
        RacingStore racing = new RacingStore(metadata);
        MetadataPositionStore earlier = new MetadataPositionStore(racing, "t/ns/persistent/topic", "fleet",
                "[t][fleet]", 100);
        earlier.load().get();
        earlier.save(positions(5), null, false).get();
        metadata.delete(CURSOR, Optional.empty()).get(); // unsubscribe
        MetadataPositionStore again = store();
        racing.after(OperationType.GET, earlier.path(), () -> createdAgain(again));

        earlier.delete().get();

        assertSavesAgain(again);
    }

    /** As above, the removal by {@link CursorDeletions} (any broker, on the cursor's deletion). */
    @Test(groups = "unit", timeOut = 60_000)
    public void aCursorDeletionRacingTheNewSubscriptionsCreationDoesNotStopItsSaves() throws Exception {
        createCursor();
        MetadataPositionStore earlier = store();
        earlier.load().get();
        earlier.save(positions(5), null, false).get();
        metadata.delete(CURSOR, Optional.empty()).get();
        MetadataPositionStore again = store();
        RacingStore racing = new RacingStore(metadata);
        racing.after(OperationType.EXISTS, CURSOR, () -> createdAgain(again));

        new CursorDeletions(racing).cursorDeleted(CURSOR).get();

        assertSavesAgain(again);
    }

    /**
     * The other side of the two tests above (a review of their fix): a store whose head vanished writes it again only
     * for the cursor its load read. Here the topic was deleted (stock then never deletes the subscription, so its
     * store is not told) and a subscription of the same name created again; the earlier store's late save must not
     * create a head the new subscription would load as its own.
     */
    @Test(groups = "unit", timeOut = 60_000)
    public void anEarlierSubscriptionsStoreDoesNotWriteAHeadForTheCursorCreatedAgain() throws Exception {
        createCursor();
        MetadataPositionStore earlier = store();
        earlier.load().get();
        earlier.save(positions(5), null, false).get();
        long firstCursor = metadata.get(CURSOR).get().orElseThrow().getStat().getCreationTimestamp();
        metadata.delete(CURSOR, Optional.empty()).get();
        assertTrue(new CursorDeletions(metadata).cursorDeleted(CURSOR).get());
        await().atMost(Duration.ofSeconds(5)).until(() -> System.currentTimeMillis() > firstCursor);
        createCursor(); // the new subscription, not installed yet

        assertSavesNoMore(earlier);
    }

    /** As above, for this subscription's own cursor on a broker that cannot say it owns the topic. */
    @Test(groups = "unit", timeOut = 60_000)
    public void aStoreThatCannotTellItOwnsTheTopicDoesNotWriteItsHeadAgain() throws Exception {
        createCursor();
        MetadataPositionStore owner = new MetadataPositionStore(metadata, "t/ns/persistent/topic", "fleet",
                "[t][fleet]", 100, new ChunkReads(), () -> CompletableFuture.failedFuture(
                        new IllegalStateException("simulated: no bundle for the topic")));
        owner.load().get();
        owner.save(positions(5), null, false).get();
        metadata.deleteRecursive(owner.path()).get();

        assertSavesNoMore(owner);
    }

    /** {@code store}'s saves fail from now on, and no head is written. */
    private void assertSavesNoMore(MetadataPositionStore store) throws Exception {
        org.testng.Assert.expectThrows(ExecutionException.class,
                () -> store.save(positions(6), null, false).get()); // the conditional write finds the head gone
        await().atMost(Duration.ofSeconds(10)).until(store::isFenced);
        ExecutionException e = org.testng.Assert.expectThrows(ExecutionException.class,
                () -> store.save(positions(7), null, false).get());
        assertTrue(e.getCause() instanceof PositionStore.NotSaved, e.toString());
        assertFalse(metadata.exists(store.path()).get(), "no head written");
    }

    /** The subscription created again: its cursor, then what the installer does, then a first save. */
    private CompletableFuture<Void> createdAgain(MetadataPositionStore again) {
        return metadata.put(CURSOR, new byte[] {1}, Optional.of(-1L))
                .thenCompose(stat -> again.discard())
                .thenCompose(v -> again.save(positions(9), null, false));
    }

    /** {@code again}'s saves land again (the first after the head vanished may fail) and its next owner reads them. */
    private void assertSavesAgain(MetadataPositionStore again) throws Exception {
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            try {
                again.save(positions(11), null, false).get();
                return true;
            } catch (ExecutionException e) {
                return false;
            }
        });
        assertFalse(again.isFenced());
        assertEquals(store().load().get().positions, SnapshotCodec.decode(SnapshotCodec.encode(positions(11))));
    }

    /**
     * A metadata store that, once, runs a racing operation after one operation on one path has completed and before
     * its caller hears of it.
     *
     * <p>Threading: {@link #armed} is an atomic reference; the race runs on the thread that completed the operation.
     */
    private static final class RacingStore extends FaultInjectionMetadataStore {
        private final AtomicReference<Object[]> armed = new AtomicReference<>();

        RacingStore(MetadataStoreExtended store) {
            super(store);
        }

        void after(OperationType op, String path, Supplier<CompletableFuture<?>> race) {
            armed.set(new Object[] {op, path, race});
        }

        @Override
        public CompletableFuture<Optional<GetResult>> get(String path) {
            return race(OperationType.GET, path, super.get(path));
        }

        @Override
        public CompletableFuture<Boolean> exists(String path) {
            return race(OperationType.EXISTS, path, super.exists(path));
        }

        @SuppressWarnings("unchecked")
        private <T> CompletableFuture<T> race(OperationType op, String path, CompletableFuture<T> done) {
            Object[] a = armed.get();
            if (a == null || a[0] != op || !a[1].equals(path) || !armed.compareAndSet(a, null)) {
                return done;
            }
            return done.thenCompose(v -> ((Supplier<CompletableFuture<?>>) a[2]).get().thenApply(x -> v));
        }
    }
}
