package io.github.pulsarbroadcast.broadcast.cnx;

import java.util.HashMap;
import java.util.Map;

/**
 * The subscribes of one connection that the plugin holds back while it prepares them off the event loop (authorizes,
 * loads the topic, installs a broadcast subscription), by consumer id, until they go on to the stock subscribe path.
 * Stock Pulsar registers a consumer id on its connection as soon as the SUBSCRIBE is read, so that a CLOSE_CONSUMER
 * for it, which the Java client sends when its subscribe timed out, cancels the creation; a held subscribe is not
 * registered there yet, so the connection cancels it here ({@link #cancel}) and the continuation drops it
 * ({@link #release} false). A second SUBSCRIBE for an id that is held is refused, as stock refuses one whose first
 * is still in progress. Regression (fortieth session, found by a review): a subscribe held for a topic load or an
 * installation and closed by the client meanwhile created the consumer anyway, which kept its name (or the Exclusive
 * slot) on a connection the client still used.
 *
 * <p>Threading: the connection's event loop only.
 */
final class HeldSubscribes {

    /** Consumer id to the token of its held subscribe (a new object per subscribe). */
    private final Map<Long, Object> held = new HashMap<>();

    /** Holds a subscribe for {@code consumerId} (none is held for it: see {@link #isHeld}); returns its token. */
    Object hold(long consumerId) {
        Object token = new Object();
        held.put(consumerId, token);
        return token;
    }

    boolean isHeld(long consumerId) {
        return held.containsKey(consumerId);
    }

    /** The client closed {@code consumerId}: its held subscribe, if any, goes no further. */
    void cancel(long consumerId) {
        held.remove(consumerId);
    }

    /** Ends the hold of {@code token}; false when it was cancelled (the subscribe must then be dropped). */
    boolean release(long consumerId, Object token) {
        return held.remove(consumerId, token);
    }
}
