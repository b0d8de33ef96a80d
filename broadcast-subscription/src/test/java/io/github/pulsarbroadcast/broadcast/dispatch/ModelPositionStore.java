package io.github.pulsarbroadcast.broadcast.dispatch;

import io.github.pulsarbroadcast.broadcast.positions.JoinFloor;
import io.github.pulsarbroadcast.broadcast.positions.PositionStore;
import io.github.pulsarbroadcast.broadcast.positions.SavedPosition;
import io.github.pulsarbroadcast.broadcast.positions.SnapshotCodec;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;

/**
 * The model tests' position store: saves go through the real codec and apply at once (the model's crash is a
 * broker that dies between two saves, not during one). As {@code MetadataPositionStore}, a load takes the state over
 * and so clears its "saved on close" mark; a load made to fail ({@link #failNextLoad}) does not. A save may fail as
 * the metadata store fails one (its future fails, nothing is written): drawn from {@link #saveFaults}, or forced for
 * the next save by {@link #nextSaveFails}.
 *
 * <p>Threading: single-threaded, like the model.
 */
final class ModelPositionStore implements PositionStore {

    /** What a new owner would load; null when nothing is saved. */
    List<SavedPosition> saved;
    int saves;
    /** Whether the last save was the one on close. */
    boolean savedOnClose;
    /** The join floor of the last save (through the codec), or null. */
    JoinFloor joinFloor;
    /** Thrown by the next save instead of saving (a failure in the capture), then cleared. */
    Error failNextSave;
    /** The next load fails (the metadata store did not answer), then cleared. */
    boolean failNextLoad;
    /** When set, the next {@link #discard} fails, leaving what is saved. */
    boolean failNextDiscard;
    /** Draws whether a save fails (one in six); null: saves fail only when forced. */
    Random saveFaults;
    /** Whether the next save fails, whatever {@link #saveFaults} would draw (null: draw), then cleared. */
    Boolean nextSaveFails;
    /** Saves that failed so far. */
    int failedSaves;
    /** The names of the last save handed over, whether it worked or not. */
    private final Set<String> captured = new HashSet<>();
    /** When set, saves wait in {@link #heldSaves} (in the order handed over) until a test runs them. */
    boolean holdSaves;
    /** Each runs one held save: applies it and completes its future. */
    final List<Runnable> heldSaves = new java.util.ArrayList<>();
    /** When the last save was made (the wall clock's milliseconds). */
    private long savedAtMillis;
    private final LongSupplier wallClock;

    /** A store whose saves are all made at wall-clock time 0. */
    ModelPositionStore() {
        this(() -> 0L);
    }

    ModelPositionStore(LongSupplier wallClock) {
        this.wallClock = wallClock;
    }

    /** The expiry the last save holds for {@code name} (wall clock; 0: saved while connected), or -1. */
    long retainedUntilMillis(String name) {
        if (saved != null) {
            for (SavedPosition p : saved) {
                if (p.name().equals(name)) {
                    return p.retainedUntilMillis();
                }
            }
        }
        return -1;
    }

    /** The names in the last save (none when nothing is saved). */
    Set<String> savedNames() {
        Set<String> names = new HashSet<>();
        if (saved != null) {
            saved.forEach(p -> names.add(p.name()));
        }
        return names;
    }

    /** The names of the last save handed over, whether it worked or not. */
    Set<String> capturedNames() {
        return new HashSet<>(captured);
    }

    @Override
    public CompletableFuture<Loaded> load() {
        if (failNextLoad) {
            failNextLoad = false;
            return CompletableFuture.failedFuture(new IllegalStateException("simulated: the load did not complete"));
        }
        Loaded loaded = new Loaded(saved, joinFloor, null, savedAtMillis, savedOnClose);
        savedOnClose = false;
        return CompletableFuture.completedFuture(loaded);
    }


    @Override
    public CompletableFuture<Void> discard() {
        if (failNextDiscard) {
            failNextDiscard = false;
            return CompletableFuture.failedFuture(new IllegalStateException("simulated: the delete did not complete"));
        }
        saved = null;
        joinFloor = null;
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletableFuture<Void> save(List<SavedPosition> positions, JoinFloor floor, boolean onClose) {
        if (failNextSave != null) {
            Error e = failNextSave;
            failNextSave = null;
            throw e;
        }
        captured.clear();
        positions.forEach(p -> captured.add(p.name()));
        Boolean forced = nextSaveFails;
        nextSaveFails = null;
        if (forced != null ? forced : saveFaults != null && saveFaults.nextInt(6) == 0) {
            failedSaves++;
            return CompletableFuture.failedFuture(new IllegalStateException("simulated: the save did not complete"));
        }
        if (holdSaves) {
            CompletableFuture<Void> held = new CompletableFuture<>();
            heldSaves.add(() -> {
                apply(positions, floor, onClose);
                held.complete(null);
            });
            return held;
        }
        apply(positions, floor, onClose);
        return CompletableFuture.completedFuture(null);
    }

    private void apply(List<SavedPosition> positions, JoinFloor floor, boolean onClose) {
        savedOnClose = onClose;
        savedAtMillis = wallClock.getAsLong();
        try {
            SnapshotCodec.Snapshot snapshot = SnapshotCodec.decodeSnapshot(SnapshotCodec.encode(positions, floor));
            saved = snapshot.positions;
            joinFloor = snapshot.joinFloor;
        } catch (SnapshotCodec.CorruptSnapshotException e) {
            throw new AssertionError("the codec cannot read what it wrote", e);
        }
        saves++;
    }

    @Override
    public CompletableFuture<Void> delete() {
        saved = null;
        joinFloor = null;
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public boolean isFenced() {
        return false;
    }
}
