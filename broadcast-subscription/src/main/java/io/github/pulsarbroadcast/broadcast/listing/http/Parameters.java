package io.github.pulsarbroadcast.broadcast.listing.http;

import io.github.pulsarbroadcast.broadcast.listing.ListingQuery;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Query parameters of a listing request as the listing takes them: one value per name ({@code state} may be given
 * several times, its values are joined with commas; any other parameter given twice is refused).
 *
 * <p>Threading: stateless; any thread.
 */
final class Parameters {

    private Parameters() {
    }

    /** @throws IllegalArgumentException naming a parameter given more than once */
    static Map<String, String> of(Map<String, String[]> raw) {
        Map<String, String> parameters = new LinkedHashMap<>();
        for (Map.Entry<String, String[]> e : raw.entrySet()) {
            String[] values = e.getValue();
            if (values.length > 1 && !ListingQuery.STATE.equals(e.getKey())) {
                throw new IllegalArgumentException("Parameter '" + e.getKey() + "' given " + values.length
                        + " times: give it once");
            }
            parameters.put(e.getKey(), String.join(",", values));
        }
        return parameters;
    }

    /** Whether the request says it comes from a redirect (stock {@code authoritative} flag); false by default. */
    static boolean authoritative(Map<String, String> parameters) {
        String value = parameters.get(ListingQuery.AUTHORITATIVE);
        if (value == null || value.isEmpty()) {
            return false;
        }
        if ("true".equalsIgnoreCase(value) || "false".equalsIgnoreCase(value)) {
            return Boolean.parseBoolean(value);
        }
        throw new IllegalArgumentException("Bad value '" + value + "' of parameter 'authoritative': allowed are"
                + " true, false");
    }

    /** The raw query string with {@code authoritative} replaced by {@code value} (as a stock redirect does). */
    static String withAuthoritative(String query, boolean value) {
        List<String> kept = new ArrayList<>();
        if (query != null && !query.isEmpty()) {
            for (String pair : query.split("&")) {
                if (!pair.isEmpty() && !pair.equals(ListingQuery.AUTHORITATIVE)
                        && !pair.startsWith(ListingQuery.AUTHORITATIVE + "=")) {
                    kept.add(pair);
                }
            }
        }
        kept.add(ListingQuery.AUTHORITATIVE + "=" + value);
        return String.join("&", kept);
    }
}
