package io.github.pulsarbroadcast.broadcast.dispatch;

/**
 * When a consumer of a terminated topic is told that it reached the end: once the dispatcher knows the topic ended
 * (a tail read or the periodic sync found its end) <em>and</em> the consumer has acknowledged every entry, as stock
 * Pulsar tells the consumers of a subscription once its backlog is empty ({@code PersistentSubscription} after an
 * acknowledgement, {@code PersistentDispatcherSingleActiveConsumer} when a read finds the end). A broadcast
 * consumer's backlog is its own position: it does not wait for the other consumers.
 *
 * <p>Telling a consumer when its last message was <em>sent</em> (what the plugin did until the thirty-second
 * session) sets the Java client's {@code hasReachedEndOfTopic()} while its receiver queue still holds messages the
 * application never took: a device reading {@code while (!consumer.hasReachedEndOfTopic())} stops early.
 *
 * <p>Threading: {@link #found} and {@link #forgotten} run on the dispatch thread, {@link #tellIfDone} on any thread
 * (the dispatch thread, and the thread of an acknowledgement); {@link #known} is volatile. An acknowledgement and the
 * dispatch thread may both tell a consumer (each reads the other's write: the flag is volatile, the position is read
 * and written under the cursor's lock); so may stock's own path once the durable mark-delete reaches the end, and a
 * later flow of a consumer at the end. The client's flag does not mind; a listener's {@code reachedEndOfTopic} may be
 * called more than once, as with stock, which tells again after every acknowledgement once the backlog is empty.
 */
final class EndOfTopic {

    private final SubscriptionStorage storage;
    /**
     * The end of the terminated topic was found (and not taken back since); written by the dispatch thread, which
     * also stops its tail reads while it is set; read by acknowledgements.
     */
    private volatile boolean known;

    EndOfTopic(SubscriptionStorage storage) {
        this.storage = storage;
    }

    /** The end was found (by a tail read, or by the periodic sync with nothing left to read); dispatch thread. */
    void found() {
        known = true;
    }

    /** Whether the end is known: then no tail read is made. */
    boolean isKnown() {
        return known;
    }

    /**
     * A reset-cursor (entries after the reset position are there to read again) or entries that came after the end:
     * the end is found anew.
     */
    void forgotten() {
        known = false;
    }

    /** Tells {@code bc} that it reached the end when the end is known and it acknowledged every entry; any thread. */
    void tellIfDone(BroadcastConsumer bc) {
        if (known && acknowledgedEverything(bc)) {
            bc.cnx.reachedEndOfTopic(bc.consumerId);
        }
    }

    private boolean acknowledgedEverything(BroadcastConsumer bc) {
        return storage.next(bc.cursor.acknowledged()).compareTo(storage.lastConfirmed()) > 0;
    }
}
