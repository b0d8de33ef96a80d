package io.github.pulsarbroadcast.broadcast.positions;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Where one subscription's consumer positions survive the broker: {@link MetadataPositionStore} in the cluster's
 * metadata store; the model tests use an in-memory one.
 *
 * <p>Contract: {@link #load} or {@link #discard} is called once, before any {@link #save}; saves are applied in the
 * order they were called, each one replacing the whole state; after {@link #delete} nothing is saved any more. A
 * store that finds another writer has taken the state over (a new owner of the topic) stops saving and says so
 * ({@link #isFenced}).
 *
 * <p>Threading: every method may be called from any thread; implementations serialise their writes.
 */
public interface PositionStore {

    /** What {@link #load} found. */
    final class Loaded {
        /** The saved positions, or null when there are none or they could not be read. */
        public final List<SavedPosition> positions;
        /** Why the positions could not be read (null when read, or when nothing was ever saved). */
        public final String problem;
        /** When the positions were saved (wall-clock milliseconds; 0 when unknown). */
        public final long savedAtMillis;
        /** Whether the last save was the one made when the subscription closed (a graceful move, not a crash). */
        public final boolean savedOnClose;
        /** Where a consumer not in {@link #positions} may have started (null when unknown or nothing was read). */
        public final JoinFloor joinFloor;

        /** Nothing read: {@code positions} null (nothing saved, or {@code problem}), or saved without a floor. */
        public Loaded(List<SavedPosition> positions, String problem, long savedAtMillis, boolean savedOnClose) {
            this(positions, null, problem, savedAtMillis, savedOnClose);
        }

        public Loaded(List<SavedPosition> positions, JoinFloor joinFloor, String problem, long savedAtMillis,
                      boolean savedOnClose) {
            this.positions = positions;
            this.joinFloor = joinFloor;
            this.problem = problem;
            this.savedAtMillis = savedAtMillis;
            this.savedOnClose = savedOnClose;
        }

        public boolean found() {
            return positions != null;
        }
    }

    /** Reads the saved positions and takes the state over, so that an earlier writer can no longer save. */
    CompletableFuture<Loaded> load();

    /** Drops whatever is saved (a subscription created anew must not inherit it) and takes the state over. */
    CompletableFuture<Void> discard();

    /**
     * Replaces the saved positions with {@code positions} and their {@code joinFloor} (null: unknown);
     * {@code onClose}: the subscription closes after it (inside a recovery window the floor then carries the window's
     * end, {@link JoinFloor#windowEndMillis}). A save a fenced or deleted store skips fails with {@link NotSaved},
     * except the one on close (nothing is left to save then).
     */
    CompletableFuture<Void> save(List<SavedPosition> positions, JoinFloor joinFloor, boolean onClose);

    /** Removes the saved positions for good (the subscription is deleted). */
    CompletableFuture<Void> delete();

    /**
     * Whether no save lands here any more: another writer took the state over, or the state was deleted (the
     * subscription's, or from under it).
     */
    boolean isFenced();

    /** A save refused because none can land here any more: no later save retries it. */
    final class NotSaved extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        public NotSaved(String message) {
            super(message);
        }
    }
}
