package io.github.pulsarbroadcast.broadcast.listing.http;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;

/**
 * The resource a listing request names: {@code /v1/persistent/{tenant}/{namespace}/{topic}/subscription/
 * {subscription}/consumers} under the servlet's base path, each name URL-encoded as in the stock admin API (so a
 * subscription name may hold a {@code /} as {@code %2F}).
 *
 * <p>Threading: immutable; any thread.
 */
final class ListingPath {

    static final String FORM = "/v1/persistent/{tenant}/{namespace}/{topic}/subscription/{subscription}/consumers";

    private final String topic;
    private final String subscription;

    private ListingPath(String topic, String subscription) {
        this.topic = topic;
        this.subscription = subscription;
    }

    /**
     * @param rawPath the request path after the servlet's base path, still URL-encoded
     * @throws IllegalArgumentException when it is not of the {@link #FORM}
     */
    static ListingPath parse(String rawPath) {
        String[] s = rawPath == null ? new String[0] : rawPath.split("/", -1);
        // "", "v1", "persistent", tenant, namespace, topic, "subscription", subscription, "consumers"
        if (s.length != 9 || !s[0].isEmpty() || !"v1".equals(s[1]) || !"subscription".equals(s[6])
                || !"consumers".equals(s[8])) {
            throw new IllegalArgumentException("Unknown path '" + rawPath + "': the listing is at " + FORM);
        }
        if (!"persistent".equals(s[2])) {
            throw new IllegalArgumentException("Broadcast subscriptions exist on persistent topics only, not '"
                    + s[2] + "': the listing is at " + FORM);
        }
        for (int i = 3; i <= 7; i++) {
            if (i != 6 && decode(s[i]).isEmpty()) {
                throw new IllegalArgumentException("Empty name in path '" + rawPath + "': the listing is at " + FORM);
            }
        }
        String topic = "persistent://" + decode(s[3]) + "/" + decode(s[4]) + "/" + decode(s[5]);
        return new ListingPath(topic, decode(s[7]));
    }

    private static String decode(String segment) {
        try {
            return URLDecoder.decode(segment, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("Badly encoded name '" + segment + "' in the path");
        }
    }

    /** The full topic name, {@code persistent://tenant/namespace/topic}. */
    String topic() {
        return topic;
    }

    String subscription() {
        return subscription;
    }
}
