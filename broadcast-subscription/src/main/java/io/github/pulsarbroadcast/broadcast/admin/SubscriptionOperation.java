package io.github.pulsarbroadcast.broadcast.admin;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import org.apache.pulsar.common.naming.NamespaceName;
import org.apache.pulsar.common.naming.TopicName;
import org.apache.pulsar.common.policies.data.TopicOperation;

/**
 * A stock admin request that changes a persistent topic's subscription in place, read from its method and path:
 * {@code POST .../subscription/{sub}/resetcursor[/{timestamp}]}, {@code .../skip/{n}}, {@code .../skip_all},
 * {@code .../expireMessages[/{seconds}]} and {@code PUT .../subscription/{sub}/properties} (v2 only), under the v2 path
 * ({@code /admin/v2/persistent/{tenant}/{namespace}/{topic}}) or the v1 one
 * ({@code /admin/persistent/{property}/{cluster}/{namespace}/{topic}}), each name URL-encoded as the stock admin client
 * sends it. With the topic operation stock authorizes it with. Names are decoded as stock's handlers decode them, so
 * that both name the same subscription whatever its name holds: tenant, cluster and namespace as JAX-RS path
 * parameters (percent-decoded), the topic once by {@code Codec.decode} (its parameter is {@code @Encoded}), the
 * subscription by {@code Codec.decode} of its path parameter (decoded twice).
 *
 * <p>Threading: immutable; any thread.
 */
final class SubscriptionOperation {

    private static final String V2 = "/admin/v2/persistent/";
    private static final String V1 = "/admin/persistent/";

    final TopicName topic;
    final String subscription;
    final TopicOperation operation;

    private SubscriptionOperation(TopicName topic, String subscription, TopicOperation operation) {
        this.topic = topic;
        this.subscription = subscription;
        this.operation = operation;
    }

    /**
     * The operation a request names, or null for every other request (most of them: the check before any parsing is
     * the method and two substrings).
     *
     * @param rawPath the request URI, still URL-encoded
     */
    static SubscriptionOperation parse(String method, String rawPath) {
        if (rawPath == null || !("POST".equals(method) || "PUT".equals(method))
                || !rawPath.contains("/subscription/")) {
            return null;
        }
        if (rawPath.endsWith("/")) {
            // Jersey matches a resource path with one trailing slash too, so stock runs such a call (regression,
            // forty-second session's review: it ran on the managed cursor alone, unprepared).
            rawPath = rawPath.substring(0, rawPath.length() - 1);
        }
        int names;
        String rest;
        if (rawPath.startsWith(V2)) {
            names = 3;
            rest = rawPath.substring(V2.length());
        } else if (rawPath.startsWith(V1)) {
            names = 4;
            rest = rawPath.substring(V1.length());
        } else {
            return null;
        }
        String[] s = rest.split("/", -1);
        for (int i = 0; i < s.length; i++) {
            int matrix = s[i].indexOf(';');
            if (matrix >= 0) {
                // Jersey matches paths without their matrix parameters (regression, forty-second session's review:
                // ".../skip_all;x=1" ran on the managed cursor alone, unprepared).
                s[i] = s[i].substring(0, matrix);
            }
        }
        // names..., "subscription", subscription, operation[, argument]
        if (s.length < names + 3 || s.length > names + 4 || !"subscription".equals(s[names])) {
            return null;
        }
        TopicOperation operation = operation(method, names == 3, s[names + 2], s.length - names - 3);
        if (operation == null) {
            return null;
        }
        try {
            String[] decoded = new String[names + 2];
            for (int i = 0; i < decoded.length; i++) {
                String parameter = i == names - 1 ? s[i] : pathParameter(s[i]); // the topic's is @Encoded
                decoded[i] = i == names - 1 || i == names + 1
                        ? URLDecoder.decode(parameter, StandardCharsets.UTF_8) : parameter;
                if (decoded[i].isEmpty()) {
                    return null;
                }
            }
            // As stock's validateTopicName: the namespace's names are checked (no "/" in them), then the topic.
            NamespaceName namespace = names == 3 ? NamespaceName.get(decoded[0], decoded[1])
                    : NamespaceName.get(decoded[0], decoded[1], decoded[2]);
            TopicName topic = TopicName.get("persistent", namespace, decoded[names - 1]);
            return new SubscriptionOperation(topic, decoded[names + 1], operation);
        } catch (IllegalArgumentException badName) {
            return null; // the stock handler answers it
        }
    }

    /** A path segment as a JAX-RS path parameter: percent-decoded, a {@code +} left as it is. */
    private static String pathParameter(String segment) {
        return URLDecoder.decode(segment.replace("+", "%2B"), StandardCharsets.UTF_8);
    }

    /** The operation by name and number of arguments after it; null when the path names none of them. */
    private static TopicOperation operation(String method, boolean v2, String name, int arguments) {
        if ("PUT".equals(method)) { // v2 only: the v1 API has no update of a subscription's properties
            return v2 && "properties".equals(name) && arguments == 0 ? TopicOperation.CONSUME : null;
        }
        switch (name) {
            case "resetcursor":
                return TopicOperation.RESET_CURSOR;
            case "expireMessages":
                return TopicOperation.EXPIRE_MESSAGES;
            case "skip":
                return arguments == 1 ? TopicOperation.SKIP : null;
            case "skip_all":
                return arguments == 0 ? TopicOperation.SKIP : null;
            default:
                return null;
        }
    }

    @Override
    public String toString() {
        return operation + " on [" + topic + "][" + subscription + "]";
    }
}
