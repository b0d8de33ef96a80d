package io.github.pulsarbroadcast.broadcast.positions;

import org.apache.pulsar.metadata.api.Stat;

/**
 * Where saved positions live in the metadata store: under {@value #ROOT}{@code /<tenant>/<namespace>/persistent/
 * <topic>/<subscription>}, the same path, encoded the same way, as the subscription's managed cursor under
 * {@value #MANAGED_LEDGERS}; and how a subscription's node tells an earlier subscription's of the same name
 * ({@link #predates}).
 *
 * <p>Threading: static functions.
 */
public final class PositionNodes {

    /** Root of every broadcast subscription's positions. */
    public static final String ROOT = "/pulsar-broadcast/positions";
    /** The stock managed-ledger root whose cursor nodes ours mirror. */
    public static final String MANAGED_LEDGERS = "/managed-ledgers/";

    private PositionNodes() {
    }

    /** Our node for cursor {@code cursorName} of managed ledger {@code managedLedgerName}. */
    static String positions(String managedLedgerName, String cursorName) {
        return ROOT + "/" + managedLedgerName + "/" + cursorName;
    }

    /**
     * The stock managed cursor's node of cursor {@code cursorName} ({@code Codec.encode(subscription)}) of managed
     * ledger {@code managedLedgerName} ({@code TopicName#getPersistenceNamingEncoding}).
     */
    public static String cursorNode(String managedLedgerName, String cursorName) {
        return MANAGED_LEDGERS + managedLedgerName + "/" + cursorName;
    }

    /** Our path for the stock cursor node at {@code path} ({@code /managed-ledgers/t/ns/persistent/x/c}), or null. */
    public static String forCursorNode(String path) {
        if (!path.startsWith(MANAGED_LEDGERS)) {
            return null;
        }
        String rest = path.substring(MANAGED_LEDGERS.length());
        String[] parts = rest.split("/", -1);
        return parts.length == 5 && "persistent".equals(parts[2]) ? ROOT + "/" + rest : null;
    }

    /** Chunk {@code index} of slot {@code slot} under the head node {@code head}. */
    static String chunk(String head, int slot, int index) {
        return head + "/" + slot + "-" + index;
    }

    /**
     * Whether a head was created before the cursor node was: the head of an earlier subscription of the same name
     * (this one's head is created after its cursor, when the subscription first loads). Creation times are the
     * metadata store's (ZooKeeper's {@code ctime}); a store that does not keep them (0) says nothing.
     */
    static boolean predates(Stat head, Stat cursor) {
        return head.getCreationTimestamp() > 0 && cursor.getCreationTimestamp() > 0
                && head.getCreationTimestamp() < cursor.getCreationTimestamp();
    }
}
