package io.github.pulsarbroadcast.standalone;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code pulsar-broadcast standalone}: ZooKeeper + a bookie + a broker with the plugin, in this JVM, until Ctrl-C.
 *
 * <p>Threading: {@link #call} runs on the main thread and then waits; the JVM's shutdown-hook thread closes the
 * cluster ({@link StopHook}, bounded). {@link #stopped} is the hand-over between them.
 */
@Command(name = "standalone", mixinStandardHelpOptions = true, versionProvider = BuildVersion.class,
        description = {"Start ZooKeeper, one bookie and one Pulsar 2.10.5 broker with the broadcast plugin in one JVM.",
                "Creates tenant 'public' and namespace 'public/default'. Stop with Ctrl-C."})
public final class StandaloneCommand implements Callable<Integer> {

    @Option(names = "--port", defaultValue = "6650", description = "Pulsar binary protocol port (default: ${DEFAULT-VALUE}).")
    int port;

    @Option(names = "--web-port", defaultValue = "8080", description = "HTTP admin/REST port (default: ${DEFAULT-VALUE}).")
    int webPort;

    @Option(names = "--zookeeper-port", defaultValue = "2181", description = "ZooKeeper port (default: ${DEFAULT-VALUE}).")
    int zookeeperPort;

    @Option(names = "--bookie-port", defaultValue = "3181", description = "Bookie port (default: ${DEFAULT-VALUE}); keep it fixed across restarts, ledgers name their bookie by address.")
    int bookiePort;

    @Option(names = "--bind-address", defaultValue = "127.0.0.1", description = "Address the broker listens on (default: ${DEFAULT-VALUE}: this machine only). The broker advertises 127.0.0.1 whatever it binds to, and ZooKeeper and the bookie listen on every address, as in stock standalone.")
    String bindAddress;

    @Option(names = "--data-dir", defaultValue = "data/standalone", description = "Where ZooKeeper and the bookie keep their data (default: ${DEFAULT-VALUE}).")
    Path dataDir;

    @Option(names = "--wipe", description = "Delete the data of a previous run before starting.")
    boolean wipe;

    @Option(names = "--interceptors-dir", description = "Directory with the plugin NAR (default: the one the build produced).")
    Path interceptorsDir;

    @Option(names = "--no-plugin", description = "Start a stock broker without the plugin (for comparisons).")
    boolean noPlugin;

    @Option(names = "--config", description = "A broker.conf-style file of broker and plugin keys (for example broadcastExecutorThreads); keys this command sets itself (ports, addresses, cluster, metadata store, interceptors and servlets) are refused.")
    Path configFile;

    /**
     * The broker's {@code brokerShutdownTimeoutMs}: its event loops get a quarter of it as quiet period (at most 5 s)
     * and half of it at most, so that they still run while the BookKeeper clients on them close; {@code --config} may
     * set another.
     */
    static final long SHUTDOWN_TIMEOUT_MS = 20_000;

    /** Set by picocli: errors about options are reported through the command line that ran this command. */
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    private final CountDownLatch stopped = new CountDownLatch(1);

    @Override
    public Integer call() throws Exception {
        Path nars = noPlugin ? null : resolveInterceptorsDir();
        String problem = portProblem();
        if (problem == null && configFile != null) {
            problem = BrokerConfFile.problem(configFile);
        }
        if (problem != null) {
            throw new CommandLine.ParameterException(spec.commandLine(), problem);
        }
        EmbeddedPulsar cluster = EmbeddedPulsar.builder()
                .brokerPort(port).webPort(webPort).zookeeperPort(zookeeperPort).bookiePort(bookiePort)
                .bindAddress(bindAddress).dataDir(dataDir).wipe(wipe).interceptorsDirectory(nars)
                .configFile(configFile).brokerShutdownTimeoutMs(SHUTDOWN_TIMEOUT_MS)
                .build();
        // The hook closes what a failed start left too: the command then ends with System.exit, which runs it.
        Runtime.getRuntime().addShutdownHook(StopHook.forJvm(cluster, stopped));
        cluster.start();
        System.out.println();
        System.out.println("pulsar-broadcast standalone is running" + (nars == null ? " WITHOUT the plugin" : ""));
        System.out.println("  service URL: " + cluster.serviceUrl());
        System.out.println("  admin URL:   " + cluster.webServiceUrl());
        System.out.println("  namespace:   public/default");
        if (nars != null) {
            System.out.println("  consumer listing: bin/pulsar-broadcast consumers --topic T --subscription S"
                    + " --web-url " + cluster.webServiceUrl());
        }
        System.out.println("Press Ctrl-C to stop.");
        stopped.await();
        return 0;
    }

    /** Why the port options cannot be used (the first option that cannot), or null. */
    private String portProblem() {
        String[] names = {"--port", "--web-port", "--zookeeper-port", "--bookie-port"};
        int[] ports = {port, webPort, zookeeperPort, bookiePort};
        for (int i = 0; i < ports.length; i++) {
            for (int j = 0; j < i; j++) {
                if (ports[i] != 0 && ports[i] == ports[j]) {
                    return names[i] + " " + ports[i] + ": the same port as " + names[j];
                }
            }
        }
        for (int i = 0; i < ports.length; i++) {
            // The broker binds --bind-address; ZooKeeper and the bookie every address.
            String problem = FreePort.problem(names[i], ports[i], i < 2 ? bindAddress : null);
            if (problem != null) {
                return problem;
            }
        }
        return null;
    }

    private Path resolveInterceptorsDir() {
        Path dir = interceptorsDir != null ? interceptorsDir : Path.of(System.getProperty(
                "pulsar.broadcast.interceptors", "standalone/target/interceptors"));
        if (!Files.isDirectory(dir)) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--interceptors-dir " + dir + " does not exist: build first (./mvnw -DskipTests package)");
        }
        return dir;
    }
}
