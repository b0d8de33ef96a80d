package io.github.pulsarbroadcast.standalone;

import static org.apache.pulsar.common.naming.NamespaceName.SYSTEM_NAMESPACE;
import static org.apache.pulsar.common.naming.TopicName.TRANSACTION_COORDINATOR_ASSIGN;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.function.Consumer;
import org.apache.bookkeeper.proto.BookieServer;
import org.apache.commons.lang3.StringUtils;
import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.admin.PulsarAdminBuilder;
import org.apache.pulsar.common.configuration.PulsarConfigurationLoader;
import org.apache.pulsar.common.policies.data.ClusterData;
import org.apache.pulsar.common.policies.data.TenantInfo;
import org.apache.pulsar.zookeeper.LocalBookkeeperEnsemble;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real Pulsar 2.10.5 cluster in one JVM: ZooKeeper, bookies ({@link LocalBookkeeperEnsemble}) and one or more
 * stock {@link PulsarService} brokers. With {@link Builder#interceptorsDirectory} set, every broker loads the
 * pulsar-broadcast NAR from that directory by configuration alone ({@code brokerInterceptorsDirectory} and
 * {@code brokerInterceptors}, and the same NAR as the consumer listing's additional servlet:
 * {@code additionalServletDirectory} and {@code additionalServlets}), exactly as an operator's broker.conf would.
 *
 * <p>Threading: not thread-safe; one thread starts, restarts and closes it (a test class's set-up and tear-down, or
 * the standalone's main thread and then its shutdown hook). {@link #close} tolerates a half-finished {@link #start}
 * so it can always run in a tear-down. One exception: a Ctrl-C during the standalone's start runs the hook's close
 * while the main thread still starts; that close may then fail ("Stopping failed"), and the JVM exits once the hook
 * is done either way.
 */
public final class EmbeddedPulsar implements AutoCloseable {

    /** The name in the NAR's broker_interceptor.yml. */
    public static final String INTERCEPTOR_NAME = "broadcast-subscription";
    /** The name in the same NAR's additional_servlet.yml: the consumer listing on the web port. */
    public static final String LISTING_SERVLET_NAME = "broadcast-consumers";

    private static final Logger log = LoggerFactory.getLogger(EmbeddedPulsar.class);

    private final Builder spec;
    /** Guarded by the single owning thread, like every field below. */
    private LocalBookkeeperEnsemble storage;
    private final List<PulsarService> brokers = new ArrayList<>();
    /** Brokers stopped by {@link #crashBroker}: their close is not waited for long. */
    private final Set<PulsarService> crashed = Collections.newSetFromMap(new IdentityHashMap<>());
    private PulsarAdmin admin;
    private Path workDir;
    private boolean ownsWorkDir;

    private EmbeddedPulsar(Builder spec) {
        this.spec = spec;
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * Starts ZooKeeper, the bookies and the first broker, then creates the cluster and {@code public/default} (and,
     * with {@code transactionCoordinatorEnabled}, {@code pulsar/system} and the transaction coordinators' topic).
     */
    public EmbeddedPulsar start() throws Exception {
        ownsWorkDir = spec.dataDir == null;
        workDir = ownsWorkDir ? Files.createTempDirectory("pulsar-broadcast-") : spec.dataDir.toAbsolutePath();
        Files.createDirectories(workDir);
        int zkPort = spec.zkPort;
        int bookiePort = spec.bookiePort;
        storage = new LocalBookkeeperEnsemble(spec.bookies, zkPort, 0 /* no stream storage */,
                workDir.resolve("zookeeper").toString(), workDir.resolve("bookie").toString(), spec.wipe,
                "127.0.0.1", () -> bookiePort > 0 ? bookiePort : FreePort.pick());
        storage.start();
        addBroker(spec.brokerPort, spec.webPort);
        initializeCluster();
        return this;
    }

    /** Starts one more broker of the same cluster (same ZooKeeper and bookies) on OS-assigned ports. */
    public PulsarService addBroker() throws Exception {
        return addBroker(0, 0);
    }

    private PulsarService addBroker(int brokerPort, int webPort) throws Exception {
        ServiceConfiguration conf = brokerConfig(brokerPort, webPort, brokers.size());
        PulsarService broker = new PulsarService(conf);
        brokers.add(broker);
        broker.start();
        // Pin the ports that were really bound, so that a restart comes back at the same address.
        conf.setBrokerServicePort(broker.getBrokerListenPort());
        conf.setWebServicePort(broker.getListenPortHTTP());
        log.info("Broker {} started: {} {}", brokers.size() - 1, broker.getBrokerServiceUrl(),
                broker.getWebServiceAddress());
        return broker;
    }

    private ServiceConfiguration brokerConfig(int brokerPort, int webPort, int index) throws IOException {
        // The file first: the settings below win (StandaloneCommand refuses a file that sets any of them).
        Properties p = spec.configFile != null ? BrokerConfFile.read(spec.configFile) : new Properties();
        p.setProperty("clusterName", spec.clusterName);
        p.setProperty("metadataStoreUrl", "zk:127.0.0.1:" + storage.getZookeeperPort());
        p.setProperty("configurationMetadataStoreUrl", "zk:127.0.0.1:" + storage.getZookeeperPort());
        p.setProperty("advertisedAddress", "127.0.0.1");
        p.setProperty("bindAddress", spec.bindAddress);
        // Defaults the file may change (putIfAbsent), unlike the keys above and below.
        p.putIfAbsent("managedLedgerDefaultEnsembleSize", "1");
        p.putIfAbsent("managedLedgerDefaultWriteQuorum", "1");
        p.putIfAbsent("managedLedgerDefaultAckQuorum", "1");
        // Without it the broker fails to start in containers: "Unable to read VM NIC speed".
        p.putIfAbsent("loadBalancerOverrideBrokerNicSpeedGbps", "10");
        p.putIfAbsent("brokerShutdownTimeoutMs", Long.toString(spec.shutdownTimeoutMs));
        p.putIfAbsent("brokerDeleteInactiveTopicsEnabled", "false");
        p.setProperty("narExtractionDirectory", workDir.resolve("nar-" + index).toString());
        if (spec.interceptorsDirectory != null) {
            p.setProperty("brokerInterceptorsDirectory", spec.interceptorsDirectory.toAbsolutePath().toString());
            p.setProperty("brokerInterceptors", INTERCEPTOR_NAME);
            // The same NAR is also the consumer listing's additional servlet (both keys are needed: 2.10 reads
            // them from the raw properties and loads nothing when either is missing).
            p.setProperty("additionalServletDirectory", spec.interceptorsDirectory.toAbsolutePath().toString());
            p.setProperty("additionalServlets", LISTING_SERVLET_NAME);
        }
        ServiceConfiguration conf = PulsarConfigurationLoader.create(p, ServiceConfiguration.class);
        conf.setBrokerServicePort(java.util.Optional.of(brokerPort));
        conf.setWebServicePort(java.util.Optional.of(webPort));
        if (spec.customizer != null) {
            spec.customizer.accept(conf);
        }
        return conf;
    }

    private void initializeCluster() throws Exception {
        PulsarService broker = brokers.get(0);
        ServiceConfiguration conf = broker.getConfiguration();
        PulsarAdminBuilder builder = PulsarAdmin.builder().serviceHttpUrl(broker.getWebServiceAddress());
        if (StringUtils.isNotBlank(conf.getBrokerClientAuthenticationPlugin())) {
            builder.authentication(conf.getBrokerClientAuthenticationPlugin(),
                    conf.getBrokerClientAuthenticationParameters());
        }
        admin = builder.build();
        if (!admin.clusters().getClusters().contains(spec.clusterName)) {
            admin.clusters().createCluster(spec.clusterName, ClusterData.builder()
                    .serviceUrl(broker.getWebServiceAddress())
                    .brokerServiceUrl(broker.getBrokerServiceUrl())
                    .build());
        }
        createNamespace(conf, "public", "public/default");
        if (conf.isTransactionCoordinatorEnabled()) {
            // As stock standalone: the system namespace and the topic that assigns transaction coordinators.
            createNamespace(conf, SYSTEM_NAMESPACE.getTenant(), SYSTEM_NAMESPACE.toString());
            if (!admin.topics().getPartitionedTopicList(SYSTEM_NAMESPACE.toString())
                    .contains(TRANSACTION_COORDINATOR_ASSIGN.toString())) {
                admin.topics().createPartitionedTopic(TRANSACTION_COORDINATOR_ASSIGN.toString(), 1);
            }
        }
    }

    private void createNamespace(ServiceConfiguration conf, String tenant, String namespace) throws Exception {
        if (!admin.tenants().getTenants().contains(tenant)) {
            admin.tenants().createTenant(tenant, TenantInfo.builder()
                    .adminRoles(conf.getSuperUserRoles())
                    .allowedClusters(Set.of(spec.clusterName))
                    .build());
        }
        if (!admin.namespaces().getNamespaces(tenant).contains(namespace)) {
            admin.namespaces().createNamespace(namespace, Set.of(spec.clusterName));
        }
    }

    /** Closes broker {@code index} gracefully (topics unloaded, clients told to reconnect) and starts it again at the
     *  same address. */
    public PulsarService restartBroker(int index) throws Exception {
        return restartBroker(index, conf -> { });
    }

    /** Like {@link #restartBroker(int)}, changing the broker's configuration first (for example to remove or add
     *  the plugin, as an operator's rolling restart would). */
    public PulsarService restartBroker(int index, Consumer<ServiceConfiguration> change) throws Exception {
        PulsarService old = brokers.get(index);
        ServiceConfiguration conf = old.getConfiguration();
        old.close();
        change.accept(conf);
        PulsarService fresh = new PulsarService(conf);
        brokers.set(index, fresh);
        fresh.start();
        return fresh;
    }

    /**
     * Stops broker {@code index} the way a crash would: its network and storage connections drop at once (its IO
     * event loops are shut down without a quiet period) and its metadata session ends, releasing its topics to the
     * other brokers, with no graceful unload and no cursor written on close. The dead broker stays in
     * {@link #brokers()} until {@link #close}.
     */
    public void crashBroker(int index) throws Exception {
        PulsarService broker = brokers.get(index);
        broker.getBrokerService().executor().shutdownGracefully(0, 0, java.util.concurrent.TimeUnit.SECONDS);
        broker.closeMetadataServiceSession();
        crashed.add(broker);
        log.info("Broker {} crashed on purpose", index);
    }

    /** Whether {@code conf} loads the pulsar-broadcast plugin. */
    public static boolean loadsPlugin(ServiceConfiguration conf) {
        return conf.getBrokerInterceptors().contains(INTERCEPTOR_NAME);
    }

    /** The first broker. */
    public PulsarService broker() {
        return brokers.get(0);
    }

    public List<PulsarService> brokers() {
        return List.copyOf(brokers);
    }

    /** {@code pulsar://127.0.0.1:port} of the first broker. */
    public String serviceUrl() {
        return broker().getBrokerServiceUrl();
    }

    /** {@code http://127.0.0.1:port} of the first broker. */
    public String webServiceUrl() {
        return broker().getWebServiceAddress();
    }

    /** An admin client of the cluster, owned by this object (closed by {@link #close}). */
    public PulsarAdmin admin() {
        return admin;
    }

    public String clusterName() {
        return spec.clusterName;
    }

    public int zookeeperPort() {
        return storage.getZookeeperPort();
    }

    /** The bookies, for tests that act on storage itself (a ledger whose data a bookie lost). */
    public BookieServer[] bookies() {
        return storage.getBookies();
    }

    /** Stops everything that was started, in reverse order; safe after a failed or partial {@link #start}. */
    @Override
    public void close() {
        if (admin != null) {
            admin.close();
            admin = null;
        }
        for (int i = brokers.size() - 1; i >= 0; i--) {
            PulsarService broker = brokers.get(i);
            closeBounded(broker, i, crashed.contains(broker) ? 5 : 60);
        }
        brokers.clear();
        crashed.clear();
        if (storage != null) {
            try {
                storage.stop();
            } catch (Exception e) {
                log.warn("Stopping ZooKeeper/BookKeeper failed: {}", e.toString());
            }
            storage = null;
        }
        if (ownsWorkDir && workDir != null) {
            FileTrees.deleteQuietly(workDir);
            workDir = null;
        }
    }

    /**
     * Closes a broker on a daemon thread and waits at most {@code seconds}: PulsarService.closeAsync() unloads its
     * topics synchronously before it returns, and a broker crashed on purpose ({@link #crashBroker}) blocks there
     * forever (so it gets 5 s, the others a minute). An abandoned close leaves only daemon threads behind.
     */
    private static void closeBounded(PulsarService broker, int index, int seconds) {
        Thread closer = new Thread(() -> {
            try {
                broker.close();
            } catch (Exception e) {
                log.warn("Closing broker {} failed: {}", index, e.toString());
            }
        }, "embedded-pulsar-close-" + index);
        closer.setDaemon(true);
        closer.start();
        try {
            closer.join(java.util.concurrent.TimeUnit.SECONDS.toMillis(seconds));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (closer.isAlive()) {
            StringBuilder where = new StringBuilder();
            for (StackTraceElement frame : closer.getStackTrace()) {
                where.append("\n\tat ").append(frame);
            }
            log.warn("Broker {} did not close within {} s; abandoning it. Its close is at:{}", index, seconds, where);
        }
    }

    /** What to start; every setter returns the builder. Defaults suit tests: OS-assigned ports, a temporary data
     *  directory, the plugin absent. */
    public static final class Builder {
        private String clusterName = "standalone";
        private int brokerPort;
        private int webPort;
        private int zkPort;
        private int bookiePort;
        private int bookies = 1;
        private String bindAddress = "127.0.0.1";
        private Path dataDir;
        private boolean wipe;
        private Path interceptorsDirectory;
        private Path configFile;
        private Consumer<ServiceConfiguration> customizer;
        private long shutdownTimeoutMs;

        private Builder() {
        }

        public Builder clusterName(String name) {
            this.clusterName = name;
            return this;
        }

        /** Binary protocol port of the first broker; 0 lets the OS choose. */
        public Builder brokerPort(int port) {
            this.brokerPort = port;
            return this;
        }

        /** HTTP port of the first broker; 0 lets the OS choose. */
        public Builder webPort(int port) {
            this.webPort = port;
            return this;
        }

        /** ZooKeeper port; 0 lets the OS choose. */
        public Builder zookeeperPort(int port) {
            this.zkPort = port;
            return this;
        }

        /** Bookie port; 0 picks a free port. A persistent data directory needs a fixed one: ledgers name their
         *  bookies by address. */
        public Builder bookiePort(int port) {
            this.bookiePort = port;
            return this;
        }

        public Builder bookies(int count) {
            this.bookies = count;
            return this;
        }

        public Builder bindAddress(String address) {
            this.bindAddress = address;
            return this;
        }

        /** Where ZooKeeper and the bookies keep their data; null (default) means a temporary directory that
         *  {@link #close} deletes. */
        public Builder dataDir(Path dir) {
            this.dataDir = dir;
            return this;
        }

        /** Delete the data of a previous run first. */
        public Builder wipe(boolean wipe) {
            this.wipe = wipe;
            return this;
        }

        /** Directory holding the interceptor NAR; null (default) starts stock brokers without the plugin. */
        public Builder interceptorsDirectory(Path dir) {
            this.interceptorsDirectory = dir;
            return this;
        }

        /** A broker.conf-style file applied over the defaults (ports and data directories are still ours). */
        public Builder configFile(Path file) {
            this.configFile = file;
            return this;
        }

        /**
         * The brokers' {@code brokerShutdownTimeoutMs}: 0 (default, for tests) closes at once. With 0 a broker stops
         * its IO event loops with no quiet period before it closes the BookKeeper clients whose channels run on
         * them; a bookie channel's close can then wait for ever (apache/pulsar#15650; apache/bookkeeper#3966 shows the
         * same "Event loop shut down?" lines).
         * Stock's default is 60000.
         */
        public Builder brokerShutdownTimeoutMs(long ms) {
            this.shutdownTimeoutMs = ms;
            return this;
        }

        /** Last word on every broker's configuration, applied after everything else. */
        public Builder brokerConfig(Consumer<ServiceConfiguration> customizer) {
            this.customizer = customizer;
            return this;
        }

        public EmbeddedPulsar build() {
            return new EmbeddedPulsar(this);
        }
    }
}
