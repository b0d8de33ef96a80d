package io.github.pulsarbroadcast.broadcast.cnx;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongPredicate;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;

/**
 * The broadcast subscribes of one connection that the plugin handed to the stock path, by consumer id, until the
 * consumer attaches ({@link #take}). A subscribe that stock code refuses (authorization, metadata size, a limit, a
 * fenced topic) never attaches, and stock drops its own record of it without telling anyone; such an entry is dropped
 * when the client closes that consumer id, when the id subscribes again, or at the next purge: a purge keeps only the
 * entries whose subscribe stock still holds ({@code inFlight}: stock's consumer future for the id is there and did not
 * fail; at most one entry per consumer id), and the one just put. Purges run when the map reaches a threshold that
 * doubles with the live size, so a connect storm of thousands of consumers on one connection costs amortized O(1) per
 * subscribe, and the map never holds more than 1,024 entries or twice the subscribes stock holds (regression,
 * forty-third session, found by a review: entries were purged by age, two minutes, and a role that may not consume
 * could grow the map of one connection by every refused subscribe in that time).
 *
 * <p>Threading: a concurrent map; {@link #put} runs on the connection's event loop, right before the stock subscribe
 * that registers the id in stock's map (so at a purge, also in {@link #put}, the only entry stock has not registered
 * is the one just put); {@link #take} runs on the thread that attaches the consumer. {@link #purgeAt} is written only
 * on the event loop.
 */
final class PendingJoins {

    private static final int MIN_PURGE_AT = 1024;

    private final Map<Long, InitialPosition> joins = new ConcurrentHashMap<>();
    private final LongPredicate inFlight;
    /** Event loop only. */
    private int purgeAt = MIN_PURGE_AT;

    /** {@code inFlight}: whether stock still has a subscribe of that consumer id in flight on the connection. */
    PendingJoins(LongPredicate inFlight) {
        this.inFlight = inFlight;
    }

    void put(long consumerId, InitialPosition position) {
        joins.put(consumerId, position);
        if (joins.size() >= purgeAt) {
            // Not the one just put: stock registers its id only after this (regression, forty-third session's review
            // of the purge: that join was dropped and its consumer refused as a plain one).
            joins.keySet().removeIf(id -> id != consumerId && !inFlight.test(id));
            purgeAt = Math.max(MIN_PURGE_AT, 2 * joins.size());
        }
    }

    /** Takes the join left for {@code consumerId}, or null. */
    InitialPosition take(long consumerId) {
        return joins.remove(consumerId);
    }

    void forget(long consumerId) {
        joins.remove(consumerId);
    }

    int size() {
        return joins.size();
    }
}
