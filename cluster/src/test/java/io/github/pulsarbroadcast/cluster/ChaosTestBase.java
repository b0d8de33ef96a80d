package io.github.pulsarbroadcast.cluster;

import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.common.policies.data.NamespaceOwnershipStatus;
import org.awaitility.core.ConditionTimeoutException;
import org.testng.annotations.AfterClass;
import org.testng.annotations.BeforeClass;

/**
 * A process cluster ({@code bin/pulsar-broadcast cluster up}), one topic, a fleet of {@value #DEFAULT_CONSUMERS}
 * broadcast consumers over {@value #CLIENTS} clients and a publisher at {@value #RATE} msg/s, for the fault tests to
 * break. The cluster runs with load shedding off, so that the only topic moves in a test are the ones its faults
 * cause. {@code -Dchaos.consumers=N} changes the fleet size (for a quick try).
 *
 * <p>Threading: TestNG runs a class's set-up, tests and tear-down on one thread; the fleet and the publisher have
 * threads of their own (see their Javadoc). The tear-down tolerates a half-finished set-up and stops every process the
 * cluster command started, also from a JVM shutdown hook if the tests never get to it.
 */
abstract class ChaosTestBase {

    static final int DEFAULT_CONSUMERS = 1000;
    static final int CONSUMERS = Integer.getInteger("chaos.consumers", DEFAULT_CONSUMERS);
    static final int CLIENTS = 4;
    static final int RATE = 20;
    static final String SUBSCRIPTION = "fleet";
    /** Pulsar 2.10's default metadataStoreSessionTimeoutMillis, which the cluster keeps. */
    static final int SESSION_TIMEOUT_SECONDS = 30;
    /**
     * The clients' longest reconnect back-off. The Java client's default is 60 s; after a broker loss every lookup
     * sent to the lost broker (one in two with a two-broker service URL) fails and doubles it again, so with 60 s a
     * consumer can stay away for minutes (measured: docs/install.md). {@code -Dchaos.clientMaxBackoffSeconds=60}
     * measures the default.
     */
    static final int CLIENT_MAX_BACKOFF_SECONDS = Integer.getInteger("chaos.clientMaxBackoffSeconds", 5);
    /**
     * broadcastReconnectGraceSeconds: a consumer that reconnects later than this after its topic was loaded on a
     * broker joins at the tail (docs/design.md), and for that long the subscription's mark-delete position stands
     * still. It must cover the time the slowest consumer takes to come back: several back-off steps, each lookup sent
     * to the lost broker failing. {@code -Dchaos.graceSeconds=60} measures the plugin's default.
     */
    static final int GRACE_SECONDS = Integer.getInteger("chaos.graceSeconds", 120);

    private static final Pattern BROKER_URL = Pattern.compile("\"brokerUrl\"\\s*:\\s*\"([^\"]+)\"");

    protected ClusterCommand cluster;
    protected String topic;
    protected Fleet fleet;
    protected Publisher publisher;
    private PulsarClient publisherClient;
    private PulsarAdmin admin;
    private Thread shutdownHook;
    private final HttpClient http = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NORMAL)
            .connectTimeout(Duration.ofSeconds(5)).build();

    /** Options for {@code cluster up} besides the directory, ports and artifacts. */
    protected String[] upOptions() {
        return new String[] {"--broker-conf", "loadBalancerSheddingEnabled=false",
            "--broker-conf", "broadcastReconnectGraceSeconds=" + GRACE_SECONDS};
    }

    /** Waits until the fleet is in its steady state; by default every consumer has the first 3 s of messages. */
    protected void awaitSteady() {
        await("3 s of messages issued").atMost(Duration.ofSeconds(30)).until(() -> publisher.issued() > RATE * 3);
        awaitCaughtUp(120);
        awaitMarkDeleteFollowing(GRACE_SECONDS + 60);
    }

    @BeforeClass(alwaysRun = true, timeOut = 900_000)
    public void startClusterAndFleet() throws Exception {
        cluster = ClusterCommand.inTarget(getClass().getSimpleName());
        ClusterCommand toStop = cluster;
        shutdownHook = new Thread(toStop::down, "chaos-cluster-down");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
        long t0 = System.nanoTime();
        cluster.up(upOptions());
        System.out.printf("CLUSTER up in %.1f s: %s%n", (System.nanoTime() - t0) / 1e9, cluster.env());
        topic = "persistent://public/default/chaos-" + getClass().getSimpleName();
        StringBuilder webUrls = new StringBuilder();
        for (String broker : cluster.brokers()) {
            webUrls.append(webUrls.length() == 0 ? "http://" : ",").append(cluster.webUrl(broker).substring(7));
        }
        admin = PulsarAdmin.builder().serviceHttpUrl(webUrls.toString()).build();
        admin.topics().createNonPartitionedTopic(topic);
        // Stock deduplication: a message the producer sends again after a broker loss is stored once, so the
        // duplicates counted are the ones the broadcast subscription delivers.
        admin.namespaces().setDeduplicationStatus("public/default", true);
        t0 = System.nanoTime();
        fleet = Fleet.connect(cluster.serviceUrl(), topic, SUBSCRIPTION, CLIENTS, CONSUMERS,
                Duration.ofSeconds(CLIENT_MAX_BACKOFF_SECONDS), Duration.ofMinutes(5));
        System.out.printf("FLEET %d consumers on %d clients connected in %.1f s%n", CONSUMERS, CLIENTS,
                (System.nanoTime() - t0) / 1e9);
        publisherClient = PulsarClient.builder().serviceUrl(cluster.serviceUrl())
                .maxBackoffInterval(CLIENT_MAX_BACKOFF_SECONDS, TimeUnit.SECONDS).build();
        publisher = Publisher.start(publisherClient, topic, RATE);
        awaitSteady();
    }

    @AfterClass(alwaysRun = true, timeOut = 600_000)
    public void stopEverything() {
        if (publisher != null) {
            publisher.close();
        }
        if (publisherClient != null) {
            publisherClient.closeAsync();
        }
        if (fleet != null) {
            fleet.close();
        }
        if (admin != null) {
            admin.close();
        }
        if (cluster != null) {
            System.out.println("CLUSTER down: " + cluster.down().output.replace('\n', ' '));
        }
        if (shutdownHook != null) {
            try {
                Runtime.getRuntime().removeShutdownHook(shutdownHook);
            } catch (IllegalStateException e) {
                // the JVM is shutting down: the hook runs anyway
            }
        }
    }

    protected FaultFigures.Mark mark() {
        return new FaultFigures.Mark(fleet, publisher);
    }

    /**
     * Waits (up to {@code seconds}) until every consumer has received a message published after this call (made
     * right after the fault was injected), then
     * (up to {@code catchUpSeconds}) until every consumer has every message issued by then; measures the window from
     * {@code mark} and prints its figures, whether or not the waits succeeded. Messages from {@code lossFrom} on must
     * have reached every consumer.
     */
    protected FaultFigures observe(String fault, FaultFigures.Mark mark, int seconds, int catchUpSeconds,
                                   int lossFrom) {
        return observe(fault, mark, publisher.issued(), seconds, catchUpSeconds, lossFrom);
    }

    /**
     * {@link #observe(String, FaultFigures.Mark, int, int, int)} with the first message that counts as published
     * after the fault given: for a fault that a command brings about while it runs (a graceful restart), the
     * message issued when the command began.
     */
    protected FaultFigures observe(String fault, FaultFigures.Mark mark, int after, int seconds, int catchUpSeconds,
                                   int lossFrom) {
        String failure = null;
        mark.faultSeq = after;
        int last;
        try {
            await("every consumer receiving again").atMost(Duration.ofSeconds(seconds))
                    .pollInterval(Duration.ofMillis(100)).until(() -> fleet.receivedAtLeast(after) == CONSUMERS);
            last = awaitCaughtUp(catchUpSeconds);
        } catch (ConditionTimeoutException | AssertionError e) {
            last = Math.min(publisher.storedBelow(), publisher.issued()) - 1;
            failure = fleet.receivedAtLeast(after) + " of " + CONSUMERS + " consumers received a message published"
                    + " after the fault; every consumer has every message below " + fleet.everyoneHasBelow()
                    + " of " + publisher.storedBelow() + " stored; furthest behind:" + fleet.laggards(5);
        }
        FaultFigures figures = FaultFigures.measure(fault, mark, fleet, publisher, lossFrom, last).print();
        if (failure != null) {
            throw new AssertionError("FAULT " + fault + ": " + failure + "\n" + figures.line());
        }
        return figures;
    }

    /**
     * Waits until everything issued so far is stored and every consumer has every message up to it; returns that
     * last sequence number.
     */
    protected int awaitCaughtUp(int seconds) {
        int last = publisher.issued() - 1;
        try {
            await("every consumer has every message up to " + last).atMost(Duration.ofSeconds(seconds))
                    .pollInterval(Duration.ofMillis(200)).until(() -> fleet.everyoneHasBelow() > last);
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("not every consumer has every message up to " + last + " within " + seconds
                    + " s (publisher: " + publisher.storedBelow() + " stored, " + publisher.failures()
                    + " failures); furthest behind:" + fleet.laggards(5), e);
        }
        return last;
    }

    /**
     * Waits until the subscription's durable mark-delete position follows the consumers again (its backlog is under
     * 5 s of messages): after a topic was loaded it stands still for {@link #GRACE_SECONDS}, and a fault within that
     * time would send every consumer back to where it stood at the previous one.
     */
    protected void awaitMarkDeleteFollowing(int seconds) {
        long t0 = System.nanoTime();
        await("the subscription's mark-delete position following the consumers").atMost(Duration.ofSeconds(seconds))
                .pollInterval(Duration.ofSeconds(1)).ignoreExceptions()
                .until(() -> admin.topics().getStats(topic).getSubscriptions().get(SUBSCRIPTION).getMsgBacklog()
                        < RATE * 5);
        System.out.printf("SETTLED mark-delete position following the consumers after %.1f s%n",
                (System.nanoTime() - t0) / 1e9);
    }

    /** The broker node that owns the topic, from a lookup on the first broker that answers. */
    protected String owner() {
        for (String broker : cluster.brokers()) {
            if (!cluster.alive(broker)) {
                continue;
            }
            String owner = ownerAccordingTo(broker);
            if (owner != null) {
                return owner;
            }
        }
        throw new AssertionError("no broker answered a lookup of " + topic);
    }

    /** The broker node that {@code broker}'s HTTP lookup names as the topic's owner; null if it does not answer. */
    protected String ownerAccordingTo(String broker) {
        String path = topic.replace("://", "/");
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(
                            URI.create(cluster.webUrl(broker) + "/lookup/v2/topic/" + path))
                    .timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString());
            Matcher m = BROKER_URL.matcher(r.body());
            return r.statusCode() == 200 && m.find() ? cluster.brokerNode(m.group(1)) : null;
        } catch (java.io.IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    /**
     * Whether {@code broker} itself holds the topic's namespace bundle, active: its own list of owned bundles, which
     * is what it serves from (rather than what its lookup answers).
     */
    protected boolean holdsTheTopicsBundle(String broker) throws Exception {
        String bundle = "public/default/" + admin.lookups().getBundleRange(topic);
        NamespaceOwnershipStatus status = admin.brokers().getOwnedNamespaces(cluster.env().get("CLUSTER_NAME"),
                cluster.webUrl(broker).substring("http://".length())).get(bundle);
        return status != null && status.is_active;
    }

    /**
     * How long a consumer may go without messages when a broker is lost. The lost broker keeps its topics until its
     * metadata session expires (30 s); then each consumer retries every back-off step (up to
     * {@link #CLIENT_MAX_BACKOFF_SECONDS}), and each retry whose lookup goes to the lost broker (one in two with a
     * two-broker service URL) fails: with 1,000 consumers the unluckiest needs about log2(1000) + 5 = 15 retries (a
     * chance of about 3 % to need more), so 18 steps are allowed.
     */
    static final int BROKER_LOSS_RECOVERY_SECONDS = SESSION_TIMEOUT_SECONDS + 18 * CLIENT_MAX_BACKOFF_SECONDS;
    /**
     * A consumer resumes at its own saved position (docs/design.md, "Durable consumer positions"): after a graceful
     * move the one captured at close, so it sees again only what it had received but not yet acknowledged (run 6 in
     * install.md: 2); after a crash the last periodic save, which may lack what it acknowledged in the last
     * broadcastPositionSyncIntervalMs plus one broadcastMarkDeleteIntervalMs (the save is checked by the mark-delete
     * sync) and the save's write: about 6 s by default (the thirty-seventh session corrected this from 5 s). 7 s of
     * messages at 20 msg/s covers that and the write; the consumers acknowledge each message as they receive it, so
     * what is received but not acknowledged is a few messages at most (run 6: 1 duplicate per consumer after a
     * kill). A name with nothing saved yet resumes at the
     * subscription's mark-delete position, within about 3 s of the slowest consumer (faults are spaced by
     * {@link #awaitMarkDeleteFollowing}).
     */
    static final int MAX_DUPLICATES = RATE * 7;

    /** The other broker of a two-broker cluster (or the next one). */
    protected String otherBroker(String broker) {
        var brokers = cluster.brokers();
        return brokers.get((brokers.indexOf(broker) + 1) % brokers.size());
    }
}
