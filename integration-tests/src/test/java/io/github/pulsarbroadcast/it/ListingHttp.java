package io.github.pulsarbroadcast.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * Calls the consumer listing (and, for comparison, the stock admin API) over HTTP as any client would (redirects not
 * followed, so tests see them).
 *
 * <p>Threading: immutable; any thread.
 */
final class ListingHttp {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER)
            .connectTimeout(Duration.ofSeconds(10)).build();

    /** An answer: status, Location header (or null), body as JSON. */
    static final class Answer {
        final int status;
        final String location;
        final JsonNode body;

        Answer(int status, String location, JsonNode body) {
            this.status = status;
            this.location = location;
            this.body = body;
        }

        @Override
        public String toString() {
            return status + " " + body;
        }
    }

    private ListingHttp() {
    }

    /** The listing's URL on {@code webUrl} for {@code topic} (persistent://t/n/x) and {@code subscription}. */
    static String url(String webUrl, String topic, String subscription, String query) {
        String path = topic.replace("persistent://", "");
        return webUrl + "/broadcast/v1/persistent/" + path + "/subscription/"
                + URLEncoder.encode(subscription, StandardCharsets.UTF_8) + "/consumers"
                + (query == null || query.isEmpty() ? "" : "?" + query);
    }

    static Answer get(String url, String token) throws IOException, InterruptedException {
        return get(url, token, null);
    }

    /** GET with {@code token} (or none) and, unless null, a proxy's {@code X-Original-Principal} header. */
    static Answer get(String url, String token, String originalPrincipal) throws IOException, InterruptedException {
        return send("GET", url, token, originalPrincipal);
    }

    /** A request without a body (any method, also to the stock admin API) as {@link #get(String, String, String)}. */
    static Answer send(String method, String url, String token, String originalPrincipal)
            throws IOException, InterruptedException {
        return send(method, url, token, originalPrincipal, java.util.Map.of());
    }

    /** As {@link #send(String, String, String, String)}, with more {@code headers}. */
    static Answer send(String method, String url, String token, String originalPrincipal,
                       java.util.Map<String, String> headers) throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(60))
                .method(method, HttpRequest.BodyPublishers.noBody());
        headers.forEach(request::header);
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        if (originalPrincipal != null) {
            request.header("X-Original-Principal", originalPrincipal);
        }
        HttpResponse<String> response = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
        String body = response.body();
        // The broker's authentication filter answers 401 with an HTML page, not JSON.
        JsonNode json = body == null || !body.startsWith("{") ? null : JSON.readTree(body);
        return new Answer(response.statusCode(), response.headers().firstValue("Location").orElse(null), json);
    }

    /**
     * A GET of {@code pathAndQuery} on {@code webUrl} (http://host:port) written as raw bytes, for a URL that
     * {@link URI} refuses; returns the whole answer (status line, headers, body).
     */
    static String rawGet(String webUrl, String pathAndQuery) throws IOException {
        URI web = URI.create(webUrl);
        try (java.net.Socket socket = new java.net.Socket(web.getHost(), web.getPort())) {
            socket.setSoTimeout(30_000);
            socket.getOutputStream().write(("GET " + pathAndQuery + " HTTP/1.1\r\nHost: " + web.getHost() + ":"
                    + web.getPort() + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /**
     * Starts a chunked JSON POST of {@code path} on {@code webUrl} without credentials, sends one chunk and never ends
     * the body; returns the first line the server answers within 15 s, or "no answer".
     */
    static String rawUnfinishedPost(String webUrl, String path) throws IOException {
        URI web = URI.create(webUrl);
        try (java.net.Socket socket = new java.net.Socket(web.getHost(), web.getPort())) {
            socket.setSoTimeout(15_000);
            String chunk = "{\"padding\":\"" + "x".repeat(1000) + "\"";
            socket.getOutputStream().write(("POST " + path + " HTTP/1.1\r\nHost: " + web.getHost() + ":"
                    + web.getPort() + "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + Integer.toHexString(chunk.length()) + "\r\n" + chunk + "\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(
                    socket.getInputStream(), StandardCharsets.US_ASCII));
            try {
                String line = in.readLine();
                return line == null ? "no answer (closed)" : line;
            } catch (java.net.SocketTimeoutException e) {
                return "no answer within 15 s";
            }
        }
    }
}
