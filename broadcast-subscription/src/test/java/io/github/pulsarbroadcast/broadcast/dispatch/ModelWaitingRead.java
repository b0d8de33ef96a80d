package io.github.pulsarbroadcast.broadcast.dispatch;

import org.apache.bookkeeper.mledger.AsyncCallbacks.ReadEntriesCallback;
import org.apache.bookkeeper.mledger.impl.PositionImpl;

/**
 * The tail read {@link ModelLedger}'s cursor holds while it waits for entries, as the managed cursor's waiting
 * {@code OpReadEntry}: its size, its context, the max read position it was issued with (it bounds the read once
 * woken), whether it is on the ledger's waiting list (only then does a write wake it), and the last one cancelled
 * (a cancelled read's delayed check can still fail it).
 *
 * <p>Threading: single-threaded (the model test's thread).
 */
final class ModelWaitingRead {

    ReadEntriesCallback callback;
    int maxEntries;
    Object ctx;
    PositionImpl maxRead;
    boolean onWaitingList;
    ReadEntriesCallback cancelled;
    Object cancelledCtx;

    boolean isArmed() {
        return callback != null;
    }

    /** The read waits, registered on the ledger's waiting list. */
    void arm(int maxEntries, ReadEntriesCallback callback, Object ctx, PositionImpl maxRead) {
        this.maxEntries = maxEntries;
        this.callback = callback;
        this.ctx = ctx;
        this.maxRead = maxRead;
        this.onWaitingList = true;
    }

    /** A write wakes the read if it is on the waiting list: its callback, disarmed; null when none is woken. */
    ReadEntriesCallback wake() {
        if (callback == null || !onWaitingList) {
            return null;
        }
        ReadEntriesCallback woken = callback;
        disarm();
        return woken;
    }

    /** Cancels the read (remembered as the last cancelled); false when none was armed. */
    boolean cancel() {
        if (callback == null) {
            return false;
        }
        cancelled = callback;
        cancelledCtx = ctx;
        disarm();
        return true;
    }

    void disarm() {
        callback = null;
        onWaitingList = false;
    }
}
