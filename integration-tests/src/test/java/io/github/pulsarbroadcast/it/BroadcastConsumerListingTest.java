package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertNotNull;
import static org.testng.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.MessageListener;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionType;
import org.testng.annotations.AfterClass;
import org.testng.annotations.BeforeClass;
import org.testng.annotations.Test;

/**
 * The consumer listing served by the plugin's NAR as a stock additional servlet of a real broker: 10,000 broadcast
 * consumers on one subscription (sharing four client connections), of which a few lag: three that never take a
 * message from their one-message queue (IDLE, 5 behind) and two that acknowledge only the first two messages
 * (3 behind). Paging, sorting, the state filter, every error answer, and the redirect from a broker that does not own
 * the topic.
 *
 * <p>Threading: TestNG's test thread; the consumers' listeners acknowledge on the clients' listener threads.
 */
public class BroadcastConsumerListingTest extends BroadcastTestBase {

    private static final int CONSUMERS = 10_000;
    private static final int CLIENTS = 4;
    private static final int MESSAGES = 5;
    private static final List<String> STUCK = List.of("stuck-0", "stuck-1", "stuck-2");
    private static final List<String> HALFWAY = List.of("halfway-0", "halfway-1");

    private final List<PulsarClient> clients = new ArrayList<>();
    private final List<Consumer<String>> consumers = new ArrayList<>();
    private String topic;

    @BeforeClass(alwaysRun = true, dependsOnMethods = "startCluster")
    public void startFleet() throws Exception {
        topic = newTopic("listing");
        for (int i = 0; i < CLIENTS; i++) {
            clients.add(newClient());
        }
        List<CompletableFuture<Consumer<String>>> subscribing = new ArrayList<>();
        int fast = CONSUMERS - STUCK.size() - HALFWAY.size();
        MessageListener<String> ackAll = (c, m) -> c.acknowledgeAsync(m);
        for (int i = 0; i < fast; i++) {
            subscribing.add(builder(i, String.format("v%05d", i)).receiverQueueSize(10).messageListener(ackAll)
                    .subscribeAsync());
        }
        for (int i = 0; i < STUCK.size(); i++) {
            subscribing.add(builder(i, STUCK.get(i)).receiverQueueSize(1).subscribeAsync());
        }
        MessageListener<String> ackFirstTwo = (c, m) -> {
            if (m.getValue().equals("m-1")) {
                c.acknowledgeCumulativeAsync(m);
            }
        };
        for (int i = 0; i < HALFWAY.size(); i++) {
            subscribing.add(builder(i, HALFWAY.get(i)).receiverQueueSize(10).messageListener(ackFirstTwo)
                    .subscribeAsync());
        }
        for (CompletableFuture<Consumer<String>> f : subscribing) {
            consumers.add(f.get(120, TimeUnit.SECONDS));
        }
        try (Producer<String> producer = producer(topic)) {
            publish(producer, "m", MESSAGES);
        }
        // Every fast consumer has acknowledged everything; the laggards hold still.
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).until(() -> {
            JsonNode page = ok("sort=lag&limit=6").body;
            return page.get("total").asInt() == CONSUMERS && page.get("consumers").get(5).get("lag").asLong() == 0
                    && page.get("consumers").get(4).get("lag").asLong() == 3;
        });
    }

    private org.apache.pulsar.client.api.ConsumerBuilder<String> builder(int i, String name) {
        return Broadcast.configure(clients.get(i % CLIENTS).newConsumer(Schema.STRING)).topic(topic)
                .subscriptionName("fleet").consumerName(name);
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void sortedByLagTheLaggardsComeFirst() throws Exception {
        JsonNode page = ok("sort=lag&limit=10").body;
        assertEquals(page.get("topic").asText(), topic);
        assertEquals(page.get("subscription").asText(), "fleet");
        assertEquals(page.get("sort").asText(), "lag");
        assertEquals(page.get("order").asText(), "desc");
        List<String> names = names(page);
        assertEquals(names.subList(0, 5), List.of("stuck-0", "stuck-1", "stuck-2", "halfway-0", "halfway-1"));
        JsonNode stuck = page.get("consumers").get(0);
        assertEquals(stuck.get("lag").asLong(), MESSAGES);
        assertEquals(stuck.get("state").asText(), "IDLE");
        assertEquals(stuck.get("permits").asInt(), 0);
        assertEquals(stuck.get("lastAckedTimestamp").asLong(), 0, "never acknowledged");
        assertTrue(stuck.get("address").asText().contains("127.0.0.1"), stuck.toString());
        assertTrue(stuck.get("connectedSince").asText().length() > 0, stuck.toString());
        assertNotNull(stuck.get("clientVersion").asText());
        JsonNode halfway = page.get("consumers").get(3);
        assertEquals(halfway.get("lag").asLong(), 3);
        assertTrue(halfway.get("lastAckedTimestamp").asLong() > 0);
        JsonNode fast = page.get("consumers").get(5);
        assertEquals(fast.get("lag").asLong(), 0);
        assertEquals(fast.get("acknowledged").asText(), fast.get("sent").asText(), fast.toString());
        assertEquals(fast.get("state").asText(), "WAITING");
        // Ascending: the laggards are last.
        JsonNode last = ok("sort=lag&order=asc&offset=" + (CONSUMERS - 3) + "&limit=3").body;
        assertEquals(names(last), STUCK);
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void pagesThroughTenThousandConsumers() throws Exception {
        Set<String> seen = new HashSet<>();
        List<String> inOrder = new ArrayList<>();
        for (int offset = 0; offset < CONSUMERS; offset += 1000) {
            JsonNode page = ok("sort=name&limit=1000&offset=" + offset).body;
            assertEquals(page.get("total").asInt(), CONSUMERS);
            assertEquals(page.get("consumers").size(), 1000);
            inOrder.addAll(names(page));
        }
        seen.addAll(inOrder);
        assertEquals(seen.size(), CONSUMERS, "every consumer exactly once");
        List<String> sorted = new ArrayList<>(inOrder);
        sorted.sort(String::compareTo);
        assertEquals(inOrder, sorted);
        assertEquals(ok("sort=name&offset=" + CONSUMERS).body.get("consumers").size(), 0);
        assertEquals(ok("").body.get("consumers").size(), 20, "default limit");
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void filtersByState() throws Exception {
        JsonNode idle = ok("state=IDLE&sort=name").body;
        assertEquals(idle.get("total").asInt(), STUCK.size());
        assertEquals(idle.get("connected").asInt(), CONSUMERS);
        assertEquals(names(idle), STUCK);
        JsonNode waiting = ok("state=waiting&limit=1").body;
        assertEquals(waiting.get("total").asInt(), CONSUMERS - STUCK.size());
        assertEquals(ok("state=CATCHING_UP,PENDING").body.get("total").asInt(), 0);
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void badParametersGetA400NamingThem() throws Exception {
        assertError(get("limit=0"), 400, "'limit'", "from 1 to 1000");
        assertError(get("limit=1001"), 400, "'limit'");
        assertError(get("sort=age"), 400, "'sort'", "lag, name, lastAcked");
        assertError(get("order=up"), 400, "'order'", "asc, desc");
        assertError(get("state=ASLEEP"), 400, "'state'", "CATCHING_UP");
        assertError(get("offset=-5"), 400, "'offset'");
        assertError(get("sortBy=lag"), 400, "Unknown parameter 'sortBy'");
        assertError(get("limit=1&limit=2"), 400, "'limit' given 2 times");
        // A query the web server cannot decode (regression, forty-second session's review: 500). Sent over a raw
        // socket: java.net.URI refuses to build such a URL.
        String owner = cluster.brokers().get(ownerIndex(topic)).getWebServiceAddress();
        String raw = ListingHttp.rawGet(owner, ListingHttp.url("", topic, "fleet", "limit=%zz"));
        assertTrue(raw.startsWith("HTTP/1.1 400"), raw);
        assertTrue(raw.contains("cannot be parsed"), raw);
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void unknownAndNonBroadcastSubscriptions() throws Exception {
        String web = cluster.webServiceUrl();
        assertError(ListingHttp.get(ListingHttp.url(web, topic, "nobody", ""), null), 404, "'nobody' not found");
        // A new name may fall in a bundle that another broker of this class takes: follow the redirect.
        ListingHttp.Answer missing = ListingHttp.get(ListingHttp.url(web, newTopic("missing"), "fleet", ""), null);
        if (missing.status == 307) {
            missing = ListingHttp.get(missing.location, null);
        }
        assertError(missing, 404, "not found");
        try (Consumer<String> stock = client.newConsumer(Schema.STRING).topic(topic).subscriptionName("stock")
                .subscriptionType(SubscriptionType.Failover).subscribe()) {
            assertError(ListingHttp.get(ListingHttp.url(web, topic, "stock", ""), null), 409,
                    "not a broadcast subscription");
        }
        assertError(ListingHttp.get(web + "/broadcast/v1/nothing", null), 404, "/v1/persistent/{tenant}");

        String partitioned = newTopic("partitioned");
        cluster.admin().topics().createPartitionedTopic(partitioned, 2);
        ListingHttp.Answer whole = ListingHttp.get(ListingHttp.url(web, partitioned, "fleet", ""), null);
        if (whole.status == 307) {
            whole = ListingHttp.get(whole.location, null);
        }
        assertError(whole, 400, "partitioned topic with 2 partitions", partitioned + "-partition-0");
    }

    /**
     * operations.md: a subscription marked broadcast that no broadcast consumer has joined since this broker loaded
     * the topic answers 200 with no consumers and a note (its saved positions are not loaded until one joins).
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void aSubscriptionNobodyJoinedSinceTheLoadAnswersWithANote() throws Exception {
        String quiet = newTopic("listing-quiet");
        Broadcast.configure(client.newConsumer(Schema.STRING)).topic(quiet).subscriptionName("fleet")
                .consumerName("gone").subscribe().close();
        cluster.admin().topics().unload(quiet);
        try (Producer<String> loader = producer(quiet)) { // loads the topic again, with nobody joining
            ListingHttp.Answer answer = ListingHttp.get(ListingHttp.url(cluster.webServiceUrl(), quiet, "fleet", ""),
                    null);
            if (answer.status == 307) {
                answer = ListingHttp.get(answer.location, null);
            }
            assertEquals(answer.status, 200, answer.toString());
            assertEquals(answer.body.get("consumers").size(), 0, answer.toString());
            assertTrue(answer.body.get("note").asText().startsWith("No broadcast consumer has joined this"
                    + " subscription since this broker loaded the topic"), answer.toString());
        }
    }

    /**
     * operations.md, the listing's fields: a consumer that disconnected is counted in {@code retained} (its position
     * is kept for a reconnect) and not listed; once it is back it is listed again and no longer retained.
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void aDisconnectedConsumerIsRetainedNotListed() throws Exception {
        String small = newTopic("listing-retained");
        try (Consumer<String> stays = Broadcast.configure(client.newConsumer(Schema.STRING)).topic(small)
                .subscriptionName("fleet").consumerName("stays").subscribe()) {
            Broadcast.configure(client.newConsumer(Schema.STRING)).topic(small).subscriptionName("fleet")
                    .consumerName("leaves").subscribe().close();
            await().atMost(Duration.ofSeconds(30)).until(() -> listing(small).get("retained").asInt() == 1);
            JsonNode page = listing(small);
            assertEquals(names(page), List.of("stays"), page.toString());
            assertEquals(page.get("total").asInt(), 1, page.toString());
            assertEquals(page.get("connected").asInt(), 1, page.toString());
            try (Consumer<String> back = Broadcast.configure(client.newConsumer(Schema.STRING)).topic(small)
                    .subscriptionName("fleet").consumerName("leaves").subscribe()) {
                page = listing(small);
                assertEquals(page.get("retained").asInt(), 0, page.toString());
                assertEquals(names(page), List.of("leaves", "stays"), page.toString());
            }
        }
    }

    /** operations.md: names are URL-encoded as in the stock admin API; a subscription {@code a/b} is {@code a%2Fb}. */
    @Test(groups = "integration", timeOut = 120_000)
    public void aSubscriptionNameWithASlashIsListedByItsEncodedName() throws Exception {
        String slashed = newTopic("listing-slash");
        try (Consumer<String> car = Broadcast.configure(client.newConsumer(Schema.STRING)).topic(slashed)
                .subscriptionName("a/b").consumerName("car").subscribe()) {
            String url = ListingHttp.url(cluster.webServiceUrl(), slashed, "a/b", "sort=name");
            assertTrue(url.contains("/subscription/a%2Fb/consumers"), url);
            JsonNode page = listing(slashed, "a/b");
            assertEquals(page.get("subscription").asText(), "a/b", page.toString());
            assertEquals(names(page), List.of("car"), page.toString());
        }
    }

    private JsonNode listing(String topic) throws Exception {
        return listing(topic, "fleet");
    }

    /** The first page of {@code topic}'s {@code subscription} by name, following a redirect to the owner. */
    private JsonNode listing(String topic, String subscription) throws Exception {
        ListingHttp.Answer answer = ListingHttp.get(ListingHttp.url(cluster.webServiceUrl(), topic, subscription,
                "sort=name"), null);
        if (answer.status == 307) {
            answer = ListingHttp.get(answer.location, null);
        }
        assertEquals(answer.status, 200, answer.toString());
        return answer.body;
    }

    /**
     * A namespace no longer replicated to this cluster: the listing redirects to the peer cluster that serves it, as
     * stock topic stats do, and loads nothing here. Regression (forty-second session, a review): the listing took the
     * bundle and loaded the topic, and stock's replication check on load deleted this cluster's copy of it.
     */
    @Test(groups = "integration", timeOut = 120_000)
    public void aNamespaceReplicatedElsewhereIsRedirectedToThatClusterAndNotLoadedHere() throws Exception {
        String local = cluster.brokers().get(0).getConfiguration().getClusterName();
        String elsewhere = "http://127.0.0.1:1"; // nobody listens: only the redirect is looked at
        cluster.admin().clusters().createCluster("elsewhere", org.apache.pulsar.common.policies.data.ClusterData
                .builder().serviceUrl(elsewhere).build());
        cluster.admin().clusters().updatePeerClusterNames(local, new java.util.LinkedHashSet<>(List.of("elsewhere")));
        cluster.admin().tenants().createTenant("moved", org.apache.pulsar.common.policies.data.TenantInfo.builder()
                .allowedClusters(Set.of(local, "elsewhere")).build());
        cluster.admin().namespaces().createNamespace("moved/ns", Set.of(local));
        String moved = "persistent://moved/ns/listing-" + System.nanoTime();
        Broadcast.configure(client.newConsumer(Schema.STRING)).topic(moved).subscriptionName("fleet")
                .consumerName("car").subscribe().close();
        try (Producer<String> producer = producer(moved)) {
            publish(producer, "kept", 3);
        }
        String ledgerPath = "/managed-ledgers/" + org.apache.pulsar.common.naming.TopicName.get(moved)
                .getPersistenceNamingEncoding();
        cluster.admin().topics().unload(moved);
        cluster.admin().namespaces().setNamespaceReplicationClusters("moved/ns", Set.of("elsewhere"));

        String stats = cluster.webServiceUrl() + "/admin/v2/" + moved.replace("://", "/") + "/stats";
        ListingHttp.Answer stock = ListingHttp.send("GET", stats, null, null);
        ListingHttp.Answer listing = ListingHttp.get(ListingHttp.url(cluster.webServiceUrl(), moved, "fleet", ""),
                null);
        for (int hops = 0; listing.status == 307 && !listing.location.startsWith(elsewhere) && hops < 3; hops++) {
            listing = ListingHttp.get(listing.location, null); // what a client does (another broker of this class)
        }
        assertEquals(stock.status, 307, "stock stats: " + stock);
        assertTrue(stock.location.startsWith(elsewhere + "/admin/v2/"), stock.location);
        assertEquals(listing.status, 307, "the listing, as stock: " + listing);
        assertTrue(listing.location.startsWith(elsewhere + "/broadcast/v1/persistent/moved/ns/"), listing.location);
        assertTrue(cluster.brokers().get(0).getLocalMetadataStore().exists(ledgerPath).get(30, TimeUnit.SECONDS),
                "the topic's managed ledger is still there: " + ledgerPath);
    }

    /** A broker that does not own the topic redirects (307) to the owner, as the stock admin API does. */
    @Test(groups = "integration", timeOut = 120_000)
    public void anotherBrokerRedirectsToTheOwner() throws Exception {
        String owner = cluster.brokers().get(ownerIndex(topic)).getWebServiceAddress();
        String other = cluster.brokers().size() > 1 ? null : cluster.addBroker().getWebServiceAddress();
        if (other == null) {
            other = cluster.brokers().get(1 - ownerIndex(topic)).getWebServiceAddress();
        }
        ListingHttp.Answer redirect = ListingHttp.get(ListingHttp.url(other, topic, "fleet", "sort=lag&limit=3"),
                null);
        assertEquals(redirect.status, 307, redirect.toString());
        assertTrue(redirect.location.startsWith(owner + "/broadcast/v1/persistent/"), redirect.location);
        assertTrue(redirect.location.contains("sort=lag&limit=3&authoritative="), redirect.location);
        ListingHttp.Answer followed = ListingHttp.get(redirect.location, null);
        assertEquals(followed.status, 200, followed.toString());
        assertEquals(names(followed.body), STUCK);
        // The command line follows the redirect itself (operations.md).
        ConsumersCli cli = ConsumersCli.run(new String[] {"--topic", topic, "--subscription", "fleet", "--web-url",
            other}, "--sort", "lag", "--limit", "3");
        assertEquals(cli.exit, 0, cli.err);
        assertTrue(cli.out.contains("stuck-0 ") && cli.out.contains("stuck-2 "), cli.out);
    }

    /** {@code pulsar-broadcast consumers}: the table, the JSON, and a refusal with the broker's reason. */
    @Test(groups = "integration", timeOut = 120_000)
    public void commandLinePrintsTheLaggardsFirst() throws Exception {
        String[] common = {"--topic", topic, "--subscription", "fleet", "--web-url", cluster.webServiceUrl()};
        ConsumersCli table = ConsumersCli.run(common, "--sort", "lag", "--limit", "5");
        assertEquals(table.exit, 0, table.err);
        String[] lines = table.out.split("\n");
        assertTrue(lines[0].contains("'fleet': " + CONSUMERS + " consumers"), table.out);
        assertTrue(lines[1].contains("sorted by lag desc; showing 1-5"), table.out);
        assertTrue(lines[2].startsWith("NAME"), table.out);
        assertTrue(lines[3].startsWith("stuck-0 ") && lines[3].contains("IDLE") && lines[3].contains("never"),
                table.out);
        assertTrue(lines[6].startsWith("halfway-0 "), table.out);
        assertEquals(lines.length, 8, table.out);

        ConsumersCli json = ConsumersCli.run(common, "--state", "IDLE", "--json");
        assertEquals(json.exit, 0, json.err);
        assertEquals(new com.fasterxml.jackson.databind.ObjectMapper().readTree(json.out).get("total").asInt(), 3);

        ConsumersCli refused = ConsumersCli.run(common, "--limit", "5000");
        assertEquals(refused.exit, 1);
        assertTrue(refused.err.contains("HTTP 400") && refused.err.contains("'limit'"), refused.err);

        ConsumersCli badOption = ConsumersCli.run(common, "--no-such-option");
        assertEquals(badOption.exit, 2, "bad options: " + badOption.err);
        assertTrue(badOption.err.contains("--no-such-option"), badOption.err);
    }

    private ListingHttp.Answer get(String query) throws Exception {
        return ListingHttp.get(ListingHttp.url(cluster.webServiceUrl(), topic, "fleet", query), null);
    }

    private ListingHttp.Answer ok(String query) throws Exception {
        ListingHttp.Answer a = get(query);
        assertEquals(a.status, 200, a.toString());
        return a;
    }

    private static void assertError(ListingHttp.Answer a, int status, String... parts) {
        assertEquals(a.status, status, a.toString());
        String reason = a.body.get("reason").asText();
        for (String part : parts) {
            assertTrue(reason.contains(part), reason);
        }
    }

    private static List<String> names(JsonNode page) {
        List<String> names = new ArrayList<>();
        page.get("consumers").forEach(c -> names.add(c.get("name").asText()));
        return names;
    }

    @AfterClass(alwaysRun = true)
    public void closeFleet() throws Exception {
        for (PulsarClient c : clients) {
            c.close();
        }
        clients.clear();
        consumers.clear();
    }
}
