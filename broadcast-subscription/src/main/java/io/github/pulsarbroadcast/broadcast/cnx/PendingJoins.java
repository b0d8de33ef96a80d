package io.github.pulsarbroadcast.broadcast.cnx;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;

/**
 * The broadcast subscribes of one connection that the plugin prepared and handed to the stock path, by consumer id,
 * until the consumer attaches ({@link #take}). A subscribe that stock code refuses after the preparation (a limit, a
 * fenced topic) never attaches; its entry is dropped when the client closes that consumer id, when the id
 * subscribes again, or when it is older than {@link #MAX_AGE_NANOS} at the next purge. Purges run when the map
 * reaches a threshold that doubles with the live size, so a connect storm of thousands of consumers on one
 * connection costs amortized O(1) per subscribe, and failures cannot accumulate without bound.
 *
 * <p>Threading: a concurrent map; {@link #put} runs on the connection's event loop, {@link #take} on the thread that
 * attaches the consumer. {@link #purgeAt} is written only on the event loop.
 */
final class PendingJoins {

    /** A subscribe takes at most the client's operation timeout (30 s by default); four times that is stale. */
    static final long MAX_AGE_NANOS = TimeUnit.MINUTES.toNanos(2);
    private static final int MIN_PURGE_AT = 1024;

    private static final class Join {
        final InitialPosition position;
        final long atNanos;

        Join(InitialPosition position, long atNanos) {
            this.position = position;
            this.atNanos = atNanos;
        }
    }

    private final Map<Long, Join> joins = new ConcurrentHashMap<>();
    private final LongSupplier nanoClock;
    /** Event loop only. */
    private int purgeAt = MIN_PURGE_AT;

    PendingJoins(LongSupplier nanoClock) {
        this.nanoClock = nanoClock;
    }

    void put(long consumerId, InitialPosition position) {
        long now = nanoClock.getAsLong();
        joins.put(consumerId, new Join(position, now));
        if (joins.size() >= purgeAt) {
            joins.values().removeIf(j -> now - j.atNanos > MAX_AGE_NANOS);
            purgeAt = Math.max(MIN_PURGE_AT, 2 * joins.size());
        }
    }

    /** Takes the join left for {@code consumerId}, or null. */
    InitialPosition take(long consumerId) {
        Join j = joins.remove(consumerId);
        return j == null ? null : j.position;
    }

    void forget(long consumerId) {
        joins.remove(consumerId);
    }

    int size() {
        return joins.size();
    }
}
