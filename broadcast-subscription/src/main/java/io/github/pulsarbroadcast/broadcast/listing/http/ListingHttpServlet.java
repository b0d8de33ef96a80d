package io.github.pulsarbroadcast.broadcast.listing.http;

import io.github.pulsarbroadcast.broadcast.listing.ConsumerListing;
import io.github.pulsarbroadcast.broadcast.listing.ListingQuery;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import javax.servlet.ServletException;
import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.common.naming.TopicName;
import org.apache.pulsar.common.util.ObjectMapperFactory;
import org.eclipse.jetty.server.handler.ContextHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code GET <base>/v1/persistent/{tenant}/{namespace}/{topic}/subscription/{subscription}/consumers}: one page of a
 * broadcast subscription's consumers as JSON. In order: the path and the query parameters are checked (400), the
 * caller's authorization (401, 403), this broker's ownership of the topic (307 to the owner), the topic and the
 * subscription (404; 409 when it is not broadcast); then the subscription answers.
 *
 * <p>Threading: Jetty calls {@link #doGet} on its web threads, concurrently; the servlet holds only the broker
 * (set once, before the web service starts, and read through a supplier).
 */
final class ListingHttpServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;
    private static final Logger log = LoggerFactory.getLogger(ListingHttpServlet.class);

    private final transient Supplier<PulsarService> pulsar;

    ListingHttpServlet(Supplier<PulsarService> pulsar) {
        this.pulsar = pulsar;
    }

    /** At the start of its context: the web filters' order ({@link WebFilterOrder}). */
    @Override
    public void init() throws ServletException {
        ContextHandler context = ContextHandler.getContextHandler(getServletContext());
        if (context == null || context.getServer() == null) {
            log.warn("The consumer listing cannot reach the web server: the broker interceptors' web filters stay"
                    + " before its authentication filter");
            return;
        }
        int changed = WebFilterOrder.apply(context.getServer());
        log.info("Moved the broker interceptors' web filters after authentication and the request limits on {} web"
                + " contexts (0: none had a filter before them)", changed);
    }

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        String topic = "?";
        String subscription = "?";
        try {
            ListingPath path = parsePath(request);
            topic = path.topic();
            subscription = path.subscription();
            Map<String, String> parameters = badRequestIfInvalid(() -> Parameters.of(queryParameters(request)));
            ListingQuery query = badRequestIfInvalid(() -> ListingQuery.parse(parameters));
            boolean authoritative = badRequestIfInvalid(() -> Parameters.authoritative(parameters));
            TopicName topicName = badRequestIfInvalid(() -> TopicName.get(path.topic()));
            PulsarService broker = pulsar.get();
            if (broker == null) {
                throw new HttpError(503, "The broker is not started yet");
            }
            BrokerSide side = new BrokerSide(broker);
            side.authorize(request, topicName);
            side.checkCluster(request, topicName);
            side.checkOwnership(request, topicName, authoritative);
            Object live = side.subscription(topicName, path.subscription());
            Map<String, String> listingParameters = new LinkedHashMap<>(parameters);
            listingParameters.remove(ListingQuery.AUTHORITATIVE);
            Map<String, Object> answer = live == null ? notJoinedYet(topicName, path.subscription(), query)
                    : badRequestIfInvalid(() -> BrokerSide.list(live, listingParameters));
            if (log.isDebugEnabled()) {
                log.debug("[{}][{}] Consumer listing {}: {} of {}", topic, subscription, query.describe(),
                        ((List<?>) answer.get("consumers")).size(), answer.get("total"));
            }
            write(response, 200, answer);
        } catch (HttpError e) {
            if (e.location() != null) {
                response.setHeader("Location", e.location());
            }
            if (log.isDebugEnabled()) {
                log.debug("[{}][{}] Consumer listing answered {}: {}", topic, subscription, e.status(),
                        e.getMessage());
            }
            write(response, e.status(), Map.of("reason", e.getMessage()));
        } catch (RuntimeException e) {
            log.warn("[{}][{}] Consumer listing failed", topic, subscription, e);
            write(response, 500, Map.of("reason", "Listing the consumers failed: " + e));
        }
    }

    private static ListingPath parsePath(HttpServletRequest request) throws HttpError {
        String uri = request.getRequestURI();
        String context = request.getContextPath() == null ? "" : request.getContextPath();
        String rest = uri.startsWith(context) ? uri.substring(context.length()) : uri;
        try {
            return ListingPath.parse(rest);
        } catch (IllegalArgumentException e) {
            throw new HttpError(404, e.getMessage());
        }
    }

    /** A broadcast-marked subscription with no broadcast consumer since the topic was loaded here: nobody. */
    private static Map<String, Object> notJoinedYet(TopicName topic, String subscription, ListingQuery query) {
        Map<String, Object> header = new LinkedHashMap<>();
        header.put("topic", topic.toString());
        header.put("subscription", subscription);
        header.put("retained", 0);
        Map<String, Object> answer = ConsumerListing.answer(query, List.of(), header, r -> { });
        answer.put("note", "No broadcast consumer has joined this subscription since this broker loaded the topic");
        return answer;
    }

    /**
     * The request's query parameters; a query the web server cannot parse (Jetty throws its own runtime exception,
     * for {@code ?limit=%zz} say) is a bad request, not a failure of the listing (regression, forty-second session's
     * review: it answered 500).
     */
    private static Map<String, String[]> queryParameters(HttpServletRequest request) {
        try {
            return request.getParameterMap();
        } catch (IllegalArgumentException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("The query string cannot be parsed (" + e.getMessage() + "): encode"
                    + " its values as a URL's query");
        }
    }

    /** Runs {@code parse}; an {@link IllegalArgumentException} becomes a 400 with its message. */
    private static <T> T badRequestIfInvalid(Supplier<T> parse) throws HttpError {
        try {
            return parse.get();
        } catch (IllegalArgumentException e) {
            throw new HttpError(400, e.getMessage());
        }
    }

    private static void write(HttpServletResponse response, int status, Map<String, ?> body) throws IOException {
        byte[] json = ObjectMapperFactory.getThreadLocal().writeValueAsBytes(body);
        response.setStatus(status);
        response.setContentType("application/json");
        response.setCharacterEncoding("UTF-8");
        response.setContentLength(json.length);
        response.getOutputStream().write(json);
    }
}
