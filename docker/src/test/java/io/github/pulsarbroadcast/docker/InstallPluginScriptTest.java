package io.github.pulsarbroadcast.docker;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertNotEquals;
import static org.testng.Assert.assertTrue;

import io.github.pulsarbroadcast.broadcast.BroadcastConfig;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.testng.annotations.AfterMethod;
import org.testng.annotations.BeforeMethod;
import org.testng.annotations.Test;

/**
 * bin/install-plugin.sh of the binary distribution (target/dist), run with bash against a fake PULSAR_HOME: what it
 * installs, that it is idempotent, that --dry-run changes nothing and --uninstall restores the original files, and
 * that the broker.conf it writes is one the plugin accepts.
 */
@Test(groups = "unit")
public class InstallPluginScriptTest {

    /** Like a stock 2.10 broker.conf: no interceptor keys at all. */
    private static final String BROKER_CONF = String.join("\n",
            "#",
            "# Sample of a stock broker.conf",
            "#",
            "",
            "### --- General broker settings --- ###",
            "",
            "# Metadata store URL",
            "metadataStoreUrl=",
            "",
            "# Name of the cluster to which this broker belongs to",
            "clusterName=",
            "",
            "brokerServicePort=6650",
            "webServicePort=8080",
            "");

    /** Like a broker.conf of later Pulsar releases: the interceptor keys listed, empty list. */
    private static final String STANDALONE_CONF = String.join("\n",
            "# Sample of a standalone.conf",
            "clusterName=standalone",
            "",
            "# The directory to locate broker interceptors",
            "brokerInterceptorsDirectory=./interceptors",
            "",
            "# List of broker interceptor to load, which is a list of broker interceptor names",
            "brokerInterceptors=",
            "");

    private static final Pattern COMMENTED_KEY = Pattern.compile("#[A-Za-z0-9_.-]+=.*");

    private Path home;

    @BeforeMethod
    public void createPulsarHome() throws IOException {
        home = Files.createTempDirectory("pulsar-home-");
        Files.createDirectories(home.resolve("lib"));
        Files.createDirectories(home.resolve("conf"));
        Files.write(home.resolve("lib/org.apache.pulsar-pulsar-broker-" + Build.pulsarVersion() + ".jar"), new byte[0]);
        Files.writeString(home.resolve("conf/broker.conf"), BROKER_CONF);
        Files.writeString(home.resolve("conf/standalone.conf"), STANDALONE_CONF);
    }

    @AfterMethod(alwaysRun = true)
    public void deletePulsarHome() throws IOException {
        try (Stream<Path> files = Files.walk(home)) {
            for (Path p : files.sorted((a, b) -> b.getNameCount() - a.getNameCount()).collect(Collectors.toList())) {
                Files.deleteIfExists(p);
            }
        }
    }

    public void installsTheJarsTheNarAndTheKeys() throws Exception {
        Build.Result r = script("--conf", "conf/broker.conf", "--conf", "conf/standalone.conf", home.toString());
        assertEquals(r.exitCode, 0, r.toString());

        assertEquals(libNames(), List.of(
                "io.github.pulsarbroadcast-broadcast-subscription-" + Build.version() + ".jar",
                "io.github.pulsarbroadcast-ordered-executor-patch-" + Build.version() + ".jar",
                "org.apache.pulsar-pulsar-broker-" + Build.pulsarVersion() + ".jar"));
        assertTrue(Arrays.equals(Files.readAllBytes(home.resolve("interceptors/broadcast-subscription.nar")),
                Files.readAllBytes(Build.dist().resolve("interceptors/broadcast-subscription.nar"))));

        for (String conf : List.of("conf/broker.conf", "conf/standalone.conf")) {
            Properties p = properties(conf);
            assertEquals(p.getProperty("brokerInterceptors"), "broadcast-subscription", conf);
            assertEquals(p.getProperty("brokerInterceptorsDirectory"), "./interceptors", conf);
            // The same NAR is the consumer listing's additional servlet.
            assertEquals(p.getProperty("additionalServlets"), "broadcast-consumers", conf);
            assertEquals(p.getProperty("additionalServletDirectory"), "./interceptors", conf);
            assertEquals(p.getProperty("broadcastEnabled"), "true", conf);
            assertEquals(p.getProperty("broadcastExecutorThreads"), "", conf);
            // What the broker hands the plugin: accepted, with the documented defaults.
            BroadcastConfig config = BroadcastConfig.from(p);
            assertTrue(config.enabled());
            assertEquals(config.executorThreads(), Runtime.getRuntime().availableProcessors());
        }
        // standalone.conf listed the keys already: set in place, once.
        String standalone = read("conf/standalone.conf");
        assertEquals(count(standalone, "(?m)^brokerInterceptors="), 1, standalone);
        assertEquals(count(standalone, "(?m)^brokerInterceptorsDirectory="), 1, standalone);
        assertTrue(r.output.contains("pulsar-broadcast " + Build.version() + " is installed"), r.output);
    }

    public void aSecondRunChangesNothing() throws Exception {
        assertEquals(script(home.toString()).exitCode, 0);
        Map<String, String> first = snapshot();
        Build.Result again = script(home.toString());
        assertEquals(again.exitCode, 0, again.toString());
        assertEquals(snapshot(), first);
        assertTrue(again.output.contains("conf/broker.conf: already up to date"), again.output);
    }

    public void dryRunShowsTheChangesAndChangesNothing() throws Exception {
        Map<String, String> before = snapshot();
        Build.Result r = script("--dry-run", home.toString());
        assertEquals(r.exitCode, 0, r.toString());
        assertEquals(snapshot(), before);
        assertTrue(r.output.contains("[dry-run] would copy lib/io.github.pulsarbroadcast-broadcast-subscription-"),
                r.output);
        assertTrue(r.output.contains("+brokerInterceptors=broadcast-subscription"), r.output);
        assertTrue(r.output.contains("Dry run: nothing was changed."), r.output);

        assertEquals(script(home.toString()).exitCode, 0);
        Map<String, String> installed = snapshot();
        Build.Result dryUninstall = script("--dry-run", "--uninstall", home.toString());
        assertEquals(dryUninstall.exitCode, 0, dryUninstall.toString());
        assertEquals(snapshot(), installed);
        assertTrue(dryUninstall.output.contains("-brokerInterceptors=broadcast-subscription"), dryUninstall.output);
    }

    public void uninstallRestoresTheOriginalFiles() throws Exception {
        Map<String, String> original = snapshot();
        assertEquals(script("--conf", "conf/broker.conf", "--conf", "conf/standalone.conf", home.toString())
                .exitCode, 0);
        assertNotEquals(snapshot(), original);
        Build.Result r = script("--uninstall", "--conf", "conf/broker.conf", "--conf", "conf/standalone.conf",
                home.toString());
        assertEquals(r.exitCode, 0, r.toString());
        assertEquals(snapshot(), original);
        assertFalse(Files.exists(home.resolve("interceptors/broadcast-subscription.nar")));
    }

    public void keepsOtherInterceptorsAndTheOperatorsValues() throws Exception {
        Path customDir = home.resolve("custom-interceptors");
        String conf = BROKER_CONF
                + "brokerInterceptors=audit\n"
                + "brokerInterceptorsDirectory=" + customDir + "\n"
                + "broadcastExecutorThreads=8\n";
        Files.writeString(home.resolve("conf/broker.conf"), conf);

        assertEquals(script(home.toString()).exitCode, 0);
        Properties p = properties("conf/broker.conf");
        assertEquals(p.getProperty("brokerInterceptors"), "audit,broadcast-subscription");
        assertEquals(p.getProperty("brokerInterceptorsDirectory"), customDir.toString());
        assertEquals(p.getProperty("additionalServletDirectory"), customDir.toString(), "the servlet is that NAR");
        assertEquals(p.getProperty("broadcastExecutorThreads"), "8");
        assertEquals(BroadcastConfig.from(p).executorThreads(), 8);
        assertTrue(Files.isRegularFile(customDir.resolve("broadcast-subscription.nar")));
        assertFalse(Files.exists(home.resolve("interceptors")));

        assertEquals(script("--uninstall", home.toString()).exitCode, 0);
        assertEquals(read("conf/broker.conf"), conf);
        assertFalse(Files.exists(customDir.resolve("broadcast-subscription.nar")));
    }

    /** An operator's own additional servlets and directory are kept; the NAR goes to that directory too. */
    public void addsTheListingToTheOperatorsAdditionalServlets() throws Exception {
        Path servlets = home.resolve("servlets");
        String conf = BROKER_CONF
                + "additionalServletDirectory=" + servlets + "\n"
                + "additionalServlets=audit-servlet\n";
        Files.writeString(home.resolve("conf/broker.conf"), conf);

        Build.Result r = script(home.toString());
        assertEquals(r.exitCode, 0, r.toString());
        Properties p = properties("conf/broker.conf");
        assertEquals(p.getProperty("additionalServlets"), "audit-servlet,broadcast-consumers");
        assertEquals(p.getProperty("additionalServletDirectory"), servlets.toString());
        assertTrue(Files.isRegularFile(servlets.resolve("broadcast-subscription.nar")));
        assertTrue(Files.isRegularFile(home.resolve("interceptors/broadcast-subscription.nar")));

        assertEquals(script("--uninstall", home.toString()).exitCode, 0);
        assertEquals(read("conf/broker.conf"), conf);
        assertFalse(Files.exists(servlets.resolve("broadcast-subscription.nar")));
    }

    /** Pulsar 2.10 refuses to start with an empty additionalServlets: an uninstall that empties it drops the line. */
    public void uninstallNeverLeavesAnEmptyServletList() throws Exception {
        String conf = BROKER_CONF + "additionalServlets=broadcast-consumers\n";
        Files.writeString(home.resolve("conf/broker.conf"), conf);
        assertEquals(script(home.toString()).exitCode, 0);
        assertEquals(properties("conf/broker.conf").getProperty("additionalServlets"), "broadcast-consumers");
        Build.Result r = script("--uninstall", home.toString());
        assertEquals(r.exitCode, 0, r.toString());
        assertEquals(properties("conf/broker.conf").getProperty("additionalServlets"), null,
                read("conf/broker.conf"));
    }

    public void aReinstallKeepsValuesSetInsideTheBlock() throws Exception {
        assertEquals(script(home.toString()).exitCode, 0);
        String conf = read("conf/broker.conf");
        assertEquals(count(conf, "(?m)^broadcastExecutorThreads=$"), 1, conf);
        Files.writeString(home.resolve("conf/broker.conf"),
                conf.replaceFirst("(?m)^broadcastExecutorThreads=$", "broadcastExecutorThreads=4")
                        .replaceFirst("(?m)^brokerInterceptors=broadcast-subscription$",
                                "brokerInterceptors=broadcast-subscription,audit")
                        // a key of an older plugin version that this one does not know
                        .replaceFirst("(?m)^broadcastEnabled=true$", "broadcastEnabled=true\nbroadcastRetired=1"));

        Build.Result r = script(home.toString());
        assertEquals(r.exitCode, 0, r.toString());
        Properties p = properties("conf/broker.conf");
        assertEquals(p.getProperty("broadcastExecutorThreads"), "4");
        assertEquals(p.getProperty("brokerInterceptors"), "broadcast-subscription,audit");
        assertEquals(p.getProperty("broadcastRetired"), null, "an unknown plugin key stops the broker");
        assertTrue(r.output.contains("broadcastRetired is not a key of pulsar-broadcast"), r.output);
        BroadcastConfig.from(p);

        assertEquals(script("--uninstall", home.toString()).exitCode, 0);
        assertEquals(properties("conf/broker.conf").getProperty("brokerInterceptors"), "audit");
    }

    public void replacesOtherVersionsOfThePluginJars() throws Exception {
        Files.write(home.resolve("lib/io.github.pulsarbroadcast-broadcast-subscription-2.10.5.0-old.jar"),
                new byte[0]);
        assertEquals(script(home.toString()).exitCode, 0);
        assertFalse(Files.exists(home.resolve("lib/io.github.pulsarbroadcast-broadcast-subscription-2.10.5.0-old.jar")));
        assertEquals(libNames().size(), 3, libNames().toString());
    }

    public void refusesAnotherPulsarReleaseUnlessForced() throws Exception {
        Files.delete(home.resolve("lib/org.apache.pulsar-pulsar-broker-" + Build.pulsarVersion() + ".jar"));
        Files.write(home.resolve("lib/org.apache.pulsar-pulsar-broker-3.0.0.jar"), new byte[0]);
        Map<String, String> before = snapshot();
        Build.Result r = script(home.toString());
        assertEquals(r.exitCode, 1, r.toString());
        assertTrue(r.output.contains("--force"), r.output);
        assertEquals(snapshot(), before);
        assertEquals(script("--force", home.toString()).exitCode, 0);
    }

    public void rejectsBadArguments() {
        assertEquals(script().exitCode, 2);
        assertEquals(script("--bogus", home.toString()).exitCode, 2);
        assertEquals(script(home.resolve("nowhere").toString()).exitCode, 1);
        Build.Result help = script("--help");
        assertEquals(help.exitCode, 0);
        assertTrue(help.output.contains("--uninstall"), help.output);
    }

    /** A directory that is not a Pulsar installation is refused with its reason, and nothing is written there. */
    public void refusesADirectoryThatIsNotAPulsarInstallation() throws Exception {
        Path notPulsar = home.resolve("not-pulsar");
        Files.createDirectories(notPulsar.resolve("conf"));
        Files.writeString(notPulsar.resolve("conf/broker.conf"), BROKER_CONF);
        Map<String, String> before = snapshot();
        Build.Result noLib = script(notPulsar.toString());
        assertEquals(noLib.exitCode, 1, noLib.toString());
        assertTrue(noLib.output.contains("is not a Pulsar installation (no lib/ directory)"), noLib.output);
        assertEquals(snapshot(), before, "a refused run changed files");

        Files.createDirectories(notPulsar.resolve("lib"));
        Files.delete(notPulsar.resolve("conf/broker.conf"));
        before = snapshot();
        Build.Result noConf = script(notPulsar.toString());
        assertEquals(noConf.exitCode, 1, noConf.toString());
        assertTrue(noConf.output.contains("no configuration file " + notPulsar + "/conf/broker.conf"),
                noConf.output);

        Build.Result file = script(home.resolve("conf/broker.conf").toString());
        assertEquals(file.exitCode, 1, file.toString());
        assertTrue(file.output.contains("is not a Pulsar installation"), file.output);
        assertEquals(snapshot(), before, "a refused run changed files");
    }

    /** --uninstall where the plugin is not installed changes nothing, once or twice. */
    public void uninstallWithoutAnInstallChangesNothing() throws Exception {
        Map<String, String> original = snapshot();
        for (int run = 0; run < 2; run++) {
            Build.Result r = script("--uninstall", home.toString());
            assertEquals(r.exitCode, 0, r.toString());
            assertTrue(r.output.contains("conf/broker.conf: already up to date"), r.output);
            assertEquals(snapshot(), original);
        }
    }

    /** install, --uninstall, install: the second install leaves exactly what the first one did. */
    public void installAfterAnUninstallIsAFreshInstall() throws Exception {
        assertEquals(script(home.toString()).exitCode, 0);
        Map<String, String> installed = snapshot();
        assertEquals(script("--uninstall", home.toString()).exitCode, 0);
        Build.Result again = script(home.toString());
        assertEquals(again.exitCode, 0, again.toString());
        assertEquals(snapshot(), installed);
        assertTrue(again.output.contains("is installed"), again.output);
    }

    /** apply-config-from-env.py reads "#key=value" comments as keys: added comments have no other '='. */
    public void addedCommentsAreNotTakenForKeys() throws Exception {
        assertEquals(script(home.toString()).exitCode, 0);
        for (String line : read("conf/broker.conf").split("\n")) {
            if (line.startsWith("#") && line.contains("=")) {
                assertTrue(COMMENTED_KEY.matcher(line).matches() || BROKER_CONF.contains(line), line);
            }
        }
    }

    private Build.Result script(String... args) {
        List<String> command = new ArrayList<>();
        command.add("bash");
        command.add(Build.dist().resolve("bin/install-plugin.sh").toString());
        command.addAll(Arrays.asList(args));
        return Build.run(command, List.of("PULSAR_HOME"), 120);
    }

    private List<String> libNames() throws IOException {
        try (Stream<Path> files = Files.list(home.resolve("lib"))) {
            return files.map(f -> f.getFileName().toString()).sorted().collect(Collectors.toList());
        }
    }

    private String read(String relative) {
        return Build.read(home.resolve(relative));
    }

    private Properties properties(String relative) throws IOException {
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(home.resolve(relative), StandardCharsets.UTF_8)) {
            p.load(r);
        }
        return p;
    }

    /** Every file under PULSAR_HOME with its content (as ISO-8859-1, so any bytes compare exactly). */
    private Map<String, String> snapshot() throws IOException {
        Map<String, String> files = new TreeMap<>();
        try (Stream<Path> paths = Files.walk(home)) {
            for (Path p : paths.filter(Files::isRegularFile).collect(Collectors.toList())) {
                files.put(home.relativize(p).toString(),
                        new String(Files.readAllBytes(p), StandardCharsets.ISO_8859_1));
            }
        }
        return files;
    }

    private static int count(String text, String regex) {
        return (int) Pattern.compile(regex).matcher(text).results().count();
    }
}
