package io.github.pulsarbroadcast.broadcast.listing;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What a caller asks of the consumer listing, parsed and checked from query parameters. Every refusal is an
 * {@link IllegalArgumentException} whose message names the parameter and what is allowed (the HTTP answer is 400
 * with that message).
 *
 * <p>Threading: immutable; any thread.
 */
public final class ListingQuery {

    /** Parameter names. */
    public static final String SORT = "sort";
    public static final String ORDER = "order";
    public static final String STATE = "state";
    public static final String OFFSET = "offset";
    public static final String LIMIT = "limit";
    /** Stock Pulsar's redirect flag, accepted and passed on by the HTTP layer; the listing ignores it. */
    public static final String AUTHORITATIVE = "authoritative";
    public static final List<String> PARAMETERS = List.of(SORT, ORDER, STATE, OFFSET, LIMIT, AUTHORITATIVE);

    public static final int DEFAULT_LIMIT = 20;
    public static final int MAX_LIMIT = 1000;

    /** What a page can be sorted by. */
    public enum Sort {
        /** Entries behind the last written one (default: most behind first). */
        LAG,
        /** Consumer name (default: A to Z). */
        NAME,
        /** Time of the last acknowledgement (default: oldest first; never acknowledged is oldest). */
        LAST_ACKED;

        /** The parameter value: {@code lag}, {@code name}, {@code lastAcked}. */
        public String value() {
            return this == LAST_ACKED ? "lastAcked" : name().toLowerCase(Locale.ROOT);
        }

        /** Descending by default only for lag: the consumers most behind come first. */
        boolean descendingByDefault() {
            return this == LAG;
        }
    }

    /** Consumer states, as {@code BroadcastConsumer.State} names them. */
    public enum State { IDLE, WAITING, PENDING, CATCHING_UP, REMOVED }

    private final Sort sort;
    private final boolean descending;
    private final Set<State> states;
    private final int offset;
    private final int limit;

    private ListingQuery(Sort sort, boolean descending, Set<State> states, int offset, int limit) {
        this.sort = sort;
        this.descending = descending;
        this.states = states;
        this.offset = offset;
        this.limit = limit;
    }

    /** The defaults: sorted by lag, most behind first, every state, the first 20. */
    public static ListingQuery defaults() {
        return parse(Map.of());
    }

    /**
     * Parses query parameters (names are case-sensitive, values are not). An unknown parameter is refused, so a
     * typo never silently means the default.
     */
    public static ListingQuery parse(Map<String, String> parameters) {
        for (String name : parameters.keySet()) {
            if (!PARAMETERS.contains(name)) {
                throw new IllegalArgumentException("Unknown parameter '" + name + "': allowed are "
                        + String.join(", ", PARAMETERS));
            }
        }
        Sort sort = parseSort(parameters.get(SORT));
        boolean descending = parseOrder(parameters.get(ORDER), sort);
        Set<State> states = parseStates(parameters.get(STATE));
        int offset = parseInt(OFFSET, parameters.get(OFFSET), 0, 0, Integer.MAX_VALUE);
        int limit = parseInt(LIMIT, parameters.get(LIMIT), DEFAULT_LIMIT, 1, MAX_LIMIT);
        return new ListingQuery(sort, descending, states, offset, limit);
    }

    private static Sort parseSort(String value) {
        if (isBlank(value)) {
            return Sort.LAG;
        }
        for (Sort s : Sort.values()) {
            if (s.value().equalsIgnoreCase(value.trim())) {
                return s;
            }
        }
        throw new IllegalArgumentException("Bad value '" + value + "' of parameter 'sort': allowed are "
                + String.join(", ", sortValues()));
    }

    private static List<String> sortValues() {
        List<String> values = new ArrayList<>();
        for (Sort s : Sort.values()) {
            values.add(s.value());
        }
        return values;
    }

    private static boolean parseOrder(String value, Sort sort) {
        if (isBlank(value)) {
            return sort.descendingByDefault();
        }
        switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "asc":
                return false;
            case "desc":
                return true;
            default:
                throw new IllegalArgumentException("Bad value '" + value + "' of parameter 'order': allowed are asc,"
                        + " desc");
        }
    }

    private static Set<State> parseStates(String value) {
        if (isBlank(value)) {
            return Collections.unmodifiableSet(EnumSet.allOf(State.class));
        }
        EnumSet<State> states = EnumSet.noneOf(State.class);
        for (String part : value.split(",")) {
            String name = part.trim().toUpperCase(Locale.ROOT).replace('-', '_');
            if (name.isEmpty()) {
                continue;
            }
            try {
                states.add(State.valueOf(name));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("Bad value '" + part.trim() + "' of parameter 'state': allowed"
                        + " are " + stateNames() + " (comma-separated)");
            }
        }
        if (states.isEmpty()) {
            throw new IllegalArgumentException("Parameter 'state' names no state: allowed are " + stateNames()
                    + " (comma-separated)");
        }
        return Collections.unmodifiableSet(states);
    }

    private static String stateNames() {
        List<String> names = new ArrayList<>();
        for (State s : State.values()) {
            names.add(s.name());
        }
        return String.join(", ", names);
    }

    private static int parseInt(String name, String value, int byDefault, int min, int max) {
        if (isBlank(value)) {
            return byDefault;
        }
        long parsed;
        try {
            parsed = Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            parsed = Long.MIN_VALUE;
        }
        if (parsed < min || parsed > max) {
            throw new IllegalArgumentException("Bad value '" + value + "' of parameter '" + name + "': allowed is an"
                    + " integer from " + min + " to " + max);
        }
        return (int) parsed;
    }

    private static boolean isBlank(String value) {
        return value == null || value.trim().isEmpty();
    }

    public Sort sort() {
        return sort;
    }

    public boolean descending() {
        return descending;
    }

    /** The states to list (all of them when the caller named none). */
    public Set<State> states() {
        return states;
    }

    public boolean allStates() {
        return states.size() == State.values().length;
    }

    public int offset() {
        return offset;
    }

    public int limit() {
        return limit;
    }

    /** The query as it was understood, for the response. */
    public Map<String, Object> describe() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put(SORT, sort.value());
        m.put(ORDER, descending ? "desc" : "asc");
        List<String> names = new ArrayList<>();
        states.forEach(s -> names.add(s.name()));
        m.put(STATE, names);
        m.put(OFFSET, offset);
        m.put(LIMIT, limit);
        return m;
    }
}
