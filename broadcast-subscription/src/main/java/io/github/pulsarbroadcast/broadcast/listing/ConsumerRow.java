package io.github.pulsarbroadcast.broadcast.listing;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One consumer of the listing: what sorting and filtering need (read for every consumer), and the connection details
 * (address, connected since, client version) that are read only for the consumers of the page answered
 * ({@link #details}).
 *
 * <p>Threading: built and read by one thread (the web thread answering a request); the values are a snapshot of
 * volatile fields of the live consumer, each read once.
 */
public final class ConsumerRow {

    private final String name;
    private final long consumerId;
    private final ListingQuery.State state;
    private final long ackLedger;
    private final long ackEntry;
    private final long sentLedger;
    private final long sentEntry;
    private final long lag;
    private final int permits;
    private final long lastAckedMillis;
    private final long lastSentMillis;
    private final long messagesSent;
    /** Last key of the order, so that equal rows keep one order between requests (paging). */
    private final long tiebreak;
    /** Where the details come from (opaque here: the live consumer). */
    private final Object source;
    private String address;
    private String connectedSince;
    private String clientVersion;

    /** See the getters; {@code tiebreak} orders rows that are equal on every other key, {@code source} is kept
     *  for {@link #details}. */
    @SuppressWarnings("checkstyle:ParameterNumber")
    public ConsumerRow(String name, long consumerId, ListingQuery.State state, long ackLedger, long ackEntry,
                       long sentLedger, long sentEntry, long lag, int permits, long lastAckedMillis,
                       long lastSentMillis, long messagesSent, long tiebreak, Object source) {
        this.name = name == null ? "" : name;
        this.consumerId = consumerId;
        this.state = state;
        this.ackLedger = ackLedger;
        this.ackEntry = ackEntry;
        this.sentLedger = sentLedger;
        this.sentEntry = sentEntry;
        this.lag = lag;
        this.permits = permits;
        this.lastAckedMillis = lastAckedMillis;
        this.lastSentMillis = lastSentMillis;
        this.messagesSent = messagesSent;
        this.tiebreak = tiebreak;
        this.source = source;
    }

    /** Sets the connection details (for the rows of the page only). */
    public void details(String address, String connectedSince, String clientVersion) {
        this.address = address;
        this.connectedSince = connectedSince;
        this.clientVersion = clientVersion;
    }

    public String name() {
        return name;
    }

    public long consumerId() {
        return consumerId;
    }

    public ListingQuery.State state() {
        return state;
    }

    public long lag() {
        return lag;
    }

    public long lastAckedMillis() {
        return lastAckedMillis;
    }

    long tiebreak() {
        return tiebreak;
    }

    public Object source() {
        return source;
    }

    /** The row as the JSON object of the response (JDK types only). */
    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", name);
        m.put("consumerId", consumerId);
        m.put("address", address);
        m.put("state", state.name());
        m.put("acknowledged", ackLedger + ":" + ackEntry);
        m.put("sent", sentLedger + ":" + sentEntry);
        m.put("lag", lag);
        m.put("permits", permits);
        m.put("lastAckedTimestamp", lastAckedMillis);
        m.put("lastSentTimestamp", lastSentMillis);
        m.put("messagesSent", messagesSent);
        m.put("connectedSince", connectedSince);
        m.put("clientVersion", clientVersion);
        return m;
    }
}
