package io.github.pulsarbroadcast.standalone.consumers;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.StringJoiner;

/**
 * Fetches one page of the consumer listing from a broker's web service URL. A 307 from a broker that does not own
 * the topic is followed (at most {@value #MAX_REDIRECTS} times) with the same {@code Authorization} header, as
 * {@code pulsar-admin} follows the stock admin API's redirects; never from {@code https} to {@code http}, which would
 * send the token in clear (Java's {@code HttpURLConnection}, under {@code pulsar-admin}'s client, does not follow
 * such a redirect either).
 *
 * <p>Threading: immutable; any thread.
 */
final class ListingClient {

    static final int MAX_REDIRECTS = 5;

    /** The status and body of the last answer. */
    static final class Answer {
        final int status;
        final String body;
        final String url;

        Answer(int status, String body, String url) {
            this.status = status;
            this.body = body;
            this.url = url;
        }
    }

    private final HttpClient http = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER)
            .connectTimeout(Duration.ofSeconds(10)).build();
    private final String token;

    /** @param token a bearer token (Pulsar token authentication), or null */
    ListingClient(String token) {
        this.token = token;
    }

    /** The listing URL: {@code webUrl/broadcast/v1/persistent/tenant/namespace/topic/subscription/S/consumers}. */
    static String url(String webUrl, String tenant, String namespace, String localName, String subscription,
                      Map<String, String> query) {
        String base = webUrl.endsWith("/") ? webUrl.substring(0, webUrl.length() - 1) : webUrl;
        StringJoiner q = new StringJoiner("&");
        new LinkedHashMap<>(query).forEach((k, v) -> q.add(k + "=" + encode(v)));
        return base + "/broadcast/v1/persistent/" + encode(tenant) + "/" + encode(namespace) + "/"
                + encode(localName) + "/subscription/" + encode(subscription) + "/consumers"
                + (q.length() == 0 ? "" : "?" + q);
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** Where a redirect from {@code current} to {@code location} leads; refused from https to anything else. */
    static String redirect(String current, String location) throws IOException {
        URI next = URI.create(current).resolve(location);
        if ("https".equalsIgnoreCase(URI.create(current).getScheme()) && !"https".equalsIgnoreCase(next.getScheme())) {
            throw new IOException(current + " redirected to " + next + ": not followed from https to "
                    + next.getScheme() + " (the request's credentials would travel in clear)");
        }
        return next.toString();
    }

    Answer get(String url) throws IOException, InterruptedException {
        String current = url;
        for (int hop = 0; ; hop++) {
            HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(current))
                    .timeout(Duration.ofSeconds(60)).header("Accept", "application/json").GET();
            if (token != null) {
                request.header("Authorization", "Bearer " + token);
            }
            HttpResponse<String> response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
            String location = response.headers().firstValue("Location").orElse(null);
            if (response.statusCode() / 100 == 3 && location != null && hop < MAX_REDIRECTS) {
                current = redirect(current, location);
                continue;
            }
            return new Answer(response.statusCode(), response.body(), current);
        }
    }
}
