package io.github.pulsarbroadcast.standalone.consumers;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.pulsarbroadcast.standalone.BuildVersion;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.UnaryOperator;
import org.apache.pulsar.common.naming.TopicDomain;
import org.apache.pulsar.common.naming.TopicName;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code pulsar-broadcast consumers}: one page of a broadcast subscription's consumers, from the broker's consumer
 * listing (HTTP), as a table (default) or the raw JSON ({@code --json}). Exit status: 0 on success, 1 when the broker
 * refuses or fails (its reason on stderr), 2 for bad command-line options.
 *
 * <p>Threading: runs on the main thread.
 */
@Command(name = "consumers", mixinStandardHelpOptions = true, versionProvider = BuildVersion.class,
        description = {"List the consumers of one broadcast subscription: paged, sorted (by lag by default, most"
                + " behind first) and filtered by state, from the broker's consumer listing (GET /broadcast/v1/...).",
            "Example: consumers --topic alerts --subscription fleet --sort lag --limit 20"})
public final class ConsumersCommand implements Callable<Integer> {

    @Option(names = "--topic", required = true, description = "Topic: a full name such as persistent://public/default/"
            + "alerts (of a partitioned topic, one partition: alerts-partition-0), or a short name in public/default.")
    String topic;

    @Option(names = "--subscription", required = true, description = "The broadcast subscription.")
    String subscription;

    @Option(names = "--sort", defaultValue = "lag", description = "lag, name or lastAcked (default: ${DEFAULT-VALUE}).")
    String sort;

    @Option(names = "--order", description = "asc or desc (default: desc for lag, asc for name and lastAcked).")
    String order;

    @Option(names = "--state", description = "Only consumers in these states, comma-separated: IDLE, WAITING, PENDING,"
            + " CATCHING_UP, REMOVED (default: all).")
    String state;

    @Option(names = "--offset", defaultValue = "0", description = "Skip this many consumers of the sorted list"
            + " (default: ${DEFAULT-VALUE}).")
    int offset;

    @Option(names = "--limit", defaultValue = "20", description = "Consumers per page, 1 to 1000 (default:"
            + " ${DEFAULT-VALUE}).")
    int limit;

    @Option(names = "--web-url", defaultValue = "http://localhost:8080", description = "Web service URL of any broker"
            + " of the cluster; a broker that does not own the topic redirects (default: ${DEFAULT-VALUE}).")
    String webUrl;

    @Option(names = "--auth-token", description = "Token for Pulsar token authentication (also: environment"
            + " variable PULSAR_BROADCAST_AUTH_TOKEN).")
    String authToken;

    @Option(names = "--auth-token-file", description = "File holding the token.")
    Path authTokenFile;

    @Option(names = "--json", description = "Print the broker's JSON answer instead of a table.")
    boolean json;

    private final PrintStream out;
    private final PrintStream err;
    /** Reads an environment variable (the process's own, or a test's). */
    private final UnaryOperator<String> environment;

    public ConsumersCommand() {
        this(System.out, System.err, System::getenv);
    }

    /** For tests: where the table (or JSON) and the errors go, and the environment variables the command sees. */
    public ConsumersCommand(PrintStream out, PrintStream err, UnaryOperator<String> environment) {
        this.out = out;
        this.err = err;
        this.environment = environment;
    }

    @Override
    public Integer call() throws Exception {
        TopicName name;
        try {
            name = TopicName.get(topic);
        } catch (IllegalArgumentException e) {
            err.println("Bad --topic '" + topic + "': " + e.getMessage());
            return 2;
        }
        if (name.getDomain() != TopicDomain.persistent) {
            err.println("Bad --topic '" + topic + "': broadcast subscriptions exist on persistent topics only");
            return 2;
        }
        String token;
        try {
            token = token();
        } catch (IOException e) {
            err.println("Cannot read --auth-token-file " + authTokenFile + ": " + e);
            return 2;
        }
        String url = ListingClient.url(webUrl, name.getTenant(), name.getNamespacePortion(), name.getLocalName(),
                subscription, query());
        ListingClient.Answer answer;
        try {
            answer = new ListingClient(token).get(url);
        } catch (IOException | IllegalArgumentException e) {
            err.println("Cannot reach " + url + ": " + e + " (is a broker's web service at --web-url " + webUrl
                    + "?)");
            return 1;
        }
        return print(answer);
    }

    private Map<String, String> query() {
        Map<String, String> q = new LinkedHashMap<>();
        q.put("sort", sort);
        if (order != null) {
            q.put("order", order);
        }
        if (state != null) {
            q.put("state", state);
        }
        q.put("offset", Integer.toString(offset));
        q.put("limit", Integer.toString(limit));
        return q;
    }

    private String token() throws IOException {
        if (authToken != null) {
            return authToken.trim();
        }
        if (authTokenFile != null) {
            return Files.readString(authTokenFile, StandardCharsets.UTF_8).trim();
        }
        String env = environment.apply("PULSAR_BROADCAST_AUTH_TOKEN");
        return env == null || env.isBlank() ? null : env.trim();
    }

    private int print(ListingClient.Answer answer) {
        JsonNode body;
        try {
            body = new ObjectMapper().readTree(answer.body);
        } catch (IOException e) {
            body = null;
        }
        if (answer.status != 200) {
            String reason = body != null && body.has("reason") ? body.get("reason").asText() : answer.body;
            err.println("HTTP " + answer.status + " from " + answer.url + ": " + reason);
            if (answer.status == 404 && (body == null || !body.has("reason"))) {
                err.println("(Is the consumer listing enabled on that broker? It needs additionalServlets="
                        + "broadcast-consumers, see docs/configuration.md.)");
            }
            return 1;
        }
        if (json || body == null) {
            out.println(answer.body);
        } else {
            out.print(ConsumerTable.render(body, System.currentTimeMillis()));
        }
        return 0;
    }
}
