package io.github.pulsarbroadcast.it;

import io.github.pulsarbroadcast.standalone.EmbeddedPulsar;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.testng.annotations.AfterClass;
import org.testng.annotations.BeforeClass;
import org.testng.annotations.Listeners;

/**
 * One real cluster per test class: ZooKeeper, a bookie and a stock Pulsar 2.10.5 broker in this JVM on OS-assigned
 * ports, with the plugin loaded from the NAR that the build copied to {@code target/interceptors} (or, with
 * {@link #withPlugin()} false, no plugin at all). Creates {@code public/default} and a client. After the class, once
 * the cluster is closed, any buffer leak that Netty's detector reported fails it ({@link LeakCheck}).
 *
 * <p>Threading: TestNG runs set-up, tests and tear-down of a class on one thread at a time; fields are written in
 * set-up and read by the tests.
 */
@Listeners(ThreadDumpOnTimeout.class)
public abstract class BrokerTestBase {

    static {
        LeakCheck.install();
    }

    /** Set by surefire; the fallback serves runs from an IDE in the module directory. */
    protected static final Path INTERCEPTORS =
            Path.of(System.getProperty("pulsar.broadcast.interceptors", "target/interceptors"));

    protected EmbeddedPulsar cluster;
    protected PulsarClient client;

    /** Whether the broker loads the plugin. */
    protected boolean withPlugin() {
        return true;
    }

    /** Subclasses add broker settings here (authentication, plugin keys...). */
    protected void configureBroker(ServiceConfiguration conf) {
    }

    @BeforeClass(alwaysRun = true)
    public void startCluster() throws Exception {
        Path nars = null;
        if (withPlugin()) {
            if (!Files.isRegularFile(INTERCEPTORS.resolve("broadcast-subscription.nar"))) {
                throw new IllegalStateException("No plugin NAR in " + INTERCEPTORS.toAbsolutePath()
                        + ": run the tests through Maven (./mvnw verify), which builds and copies it");
            }
            nars = INTERCEPTORS;
        }
        cluster = EmbeddedPulsar.builder().interceptorsDirectory(nars).brokerConfig(conf -> {
            // No bundle moves that no test asked for: the load balancer sheds bundles off a broker it finds
            // overloaded, and on this 2-core machine a test that publishes to 1,000 consumers takes a broker above its
            // 85% CPU threshold (a CI run on 2026-11-28 saw the topic of BroadcastPositionsAcrossMovesTest move
            // before the test's own crash). Tests that move topics do it themselves (unload, crash, restart).
            conf.setLoadBalancerSheddingEnabled(false);
            configureBroker(conf);
        }).build();
        cluster.start();
        client = newClient();
    }

    /**
     * A service URL that names every broker of the cluster ({@code pulsar://127.0.0.1:p1,127.0.0.1:p2}), as a client
     * of a real cluster names several brokers: it finds a topic while one of them restarts or is down.
     */
    protected String everyBrokerServiceUrl() {
        return "pulsar://" + cluster.brokers().stream()
                .map(b -> "127.0.0.1:" + b.getBrokerListenPort().orElseThrow())
                .collect(java.util.stream.Collectors.joining(","));
    }

    /** A new client of the cluster's first broker; the caller closes it. */
    protected PulsarClient newClient() throws PulsarClientException {
        return PulsarClient.builder().serviceUrl(cluster.serviceUrl()).build();
    }

    @AfterClass(alwaysRun = true)
    public void stopCluster() {
        if (client != null) {
            try {
                client.close();
            } catch (PulsarClientException e) {
                // The cluster goes away next; nothing to keep.
            }
            client = null;
        }
        if (cluster != null) {
            cluster.close();
            cluster = null;
            LeakCheck.assertNoLeaks(getClass().getSimpleName());
        }
    }

    /** A fresh persistent topic name in public/default. */
    protected static String newTopic(String prefix) {
        return "persistent://public/default/" + prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }
}
