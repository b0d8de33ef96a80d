package io.github.pulsarbroadcast.broadcast.dispatch;

import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.mledger.AsyncCallbacks.ReadEntriesCallback;
import org.apache.bookkeeper.mledger.Entry;
import org.apache.bookkeeper.mledger.ManagedLedgerException;
import org.apache.pulsar.client.impl.Backoff;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the two kinds of storage read share: one read in flight at a time, its answer posted back to the dispatch
 * thread, and retries of a failed read with back-off (100 ms doubling to one minute, {@link #newBackoff}),
 * reset by the next read that succeeds.
 *
 * <p>Threading: confined to the subscription's dispatch thread; the callbacks arrive on storage threads and only
 * post back.
 */
abstract class StorageReads implements ReadEntriesCallback {

    private static final Logger log = LoggerFactory.getLogger(StorageReads.class);

    final FanOut fanOut;
    /** A read is in flight. */
    boolean pending;
    private boolean retryScheduled;
    private final Backoff backoff = newBackoff();
    /** The wait before reading again while an open transaction holds what is to be read ({@link #awaitTransaction}). */
    private final Backoff transactionWait = new Backoff(10, TimeUnit.MILLISECONDS, 100, TimeUnit.MILLISECONDS, 0,
            TimeUnit.MILLISECONDS);

    StorageReads(FanOut fanOut) {
        this.fanOut = fanOut;
    }

    /**
     * The back-off of failed reads: 100 ms doubling to one minute. Stock 2.10.5's dispatchers wait
     * {@code dispatcherReadFailureBackoffInitialTimeInMs} (15 s by default) doubling to
     * {@code dispatcherReadFailureBackoffMaxTimeInMs} (one minute), and a success halves the wait; here the first
     * retry comes sooner, because one broadcast subscription's read serves every consumer, and a success resets it.
     * The broker's two keys are not read (a read-only review, forty-fourth session, found the comment here had said
     * "as stock").
     */
    static Backoff newBackoff() {
        return new Backoff(100, TimeUnit.MILLISECONDS, 1, TimeUnit.MINUTES, 0, TimeUnit.MILLISECONDS);
    }

    /** Whether a new read may start now (none in flight, none waiting for its retry, not closed). */
    final boolean mayRead() {
        return !pending && !retryScheduled && !fanOut.isClosed();
    }

    /** Issues the next read if one is needed. */
    abstract void read();

    /** Entries read; {@code arrivedNanos} is when storage handed them over (on its own thread). */
    abstract void onEntries(List<Entry> entries, long arrivedNanos);

    /** A read failed; {@code ctx} is what the read was issued with. */
    abstract void onFailed(ManagedLedgerException e, Object ctx);

    /** A read succeeded: the next failure starts the back-off again. */
    final void succeeded() {
        backoff.reset();
        transactionWait.reset();
    }

    /**
     * What is to be read next lies past the max read position: it belongs to a transaction still open (or the
     * topic's transaction buffer is still recovering). Reads again after a short wait, 10 ms doubling to 100 ms while
     * it lasts, as nothing tells the managed ledger's readers when a transaction ends.
     */
    final void awaitTransaction() {
        readLater(transactionWait.next());
    }

    /** Logs and counts a failed read, and reads again after the back-off. */
    final void retryLater(String kind, ManagedLedgerException e) {
        retryScheduled = true;
        afterBackoff(kind, e, backoff, this::readAgain);
    }

    /** Reads again after {@code delayMs}: nothing failed, but what there is cannot be read yet. */
    private void readLater(long delayMs) {
        retryScheduled = true;
        fanOut.owner.schedule(this::readAgain, delayMs);
    }

    /** The read that {@link #retryLater} or {@link #readLater} waited for. */
    private void readAgain() {
        retryScheduled = false;
        read();
    }

    /** Logs and counts a failed read, and runs {@code then} after {@code backoff}'s next delay (other reads go on). */
    final void afterBackoff(String kind, ManagedLedgerException e, Backoff backoff, Runnable then) {
        long delay = backoff.next();
        fanOut.countReadFailure(kind, e, delay);
        fanOut.owner.schedule(then, delay);
    }

    /**
     * A read threw instead of calling back (stock's replay on a terminated ledger loaded again threw a
     * {@code NullPointerException}): it fails as a read that called back would, retried with back-off, so that no
     * read stays in flight for ever (regression, thirty-third session: the catch-up stopped for good).
     */
    final void failedToIssue(RuntimeException e, Object ctx) {
        readEntriesFailed(ManagedLedgerException.getManagedLedgerException(e), ctx);
    }

    /**
     * Storage's answer, posted to the dispatch thread. A pass that throws (a defect: nothing in it is meant to) is
     * logged and counted as a failed read, and the next read follows after the back-off, so the subscription goes on
     * instead of waiting for ever for a read nobody issues (before the forty-fourth session it only reached the
     * executor's log). When the dispatch thread refuses the answer (the plugin shuts down), its entries are released.
     */
    @Override
    public final void readEntriesComplete(List<Entry> entries, Object ctx) {
        postPass(entries, System.nanoTime());
    }

    /** Posts the pass over {@code entries}, as {@link #readEntriesComplete} does; any thread. */
    final void postPass(List<Entry> entries, long arrived) {
        try {
            fanOut.owner.post(() -> {
                try {
                    onEntries(entries, arrived);
                } catch (RuntimeException e) {
                    passFailed(e);
                }
            });
        } catch (RejectedExecutionException e) {
            entries.forEach(Entry::release);
        }
    }

    @Override
    public final void readEntriesFailed(ManagedLedgerException exception, Object ctx) {
        try {
            fanOut.owner.post(() -> onFailed(exception, ctx));
        } catch (RejectedExecutionException e) {
            // the plugin shuts down: nothing will read again
        }
    }

    private void passFailed(RuntimeException e) {
        log.error("{} A pass over entries read from storage failed; reading again after the back-off",
                fanOut.name, e);
        holdAfterFailedPass(e);
    }

    /**
     * A pass threw: counts a failed read and holds the next read for the back-off, unless the pass issued its next
     * read before it threw (it cleared {@code pending} first) or one is held already. The passes call it before they
     * place their consumers again (a placed consumer issues a read at once: a review found the failure then went
     * uncounted and the next read, and the next failure, came without the back-off).
     */
    final void holdAfterFailedPass(Throwable e) {
        if (!pending && !retryScheduled) {
            retryLater("pass", ManagedLedgerException.getManagedLedgerException(e));
        }
    }
}
