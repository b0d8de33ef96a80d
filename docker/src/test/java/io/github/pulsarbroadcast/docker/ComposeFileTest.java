package io.github.pulsarbroadcast.docker;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertNotEquals;
import static org.testng.Assert.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.testng.SkipException;
import org.testng.annotations.BeforeClass;
import org.testng.annotations.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * target/compose/docker-compose.yml: its structure (read with SnakeYAML, always), and its validity for Docker Compose
 * ({@code docker compose config -q}, which needs no Docker engine) when a Compose CLI is installed; skipped, with a
 * message, when none is.
 */
@Test(groups = "unit")
public class ComposeFileTest {

    /** Variables of the compose file: the check uses their defaults. */
    private static final List<String> COMPOSE_VARIABLES =
            List.of("PULSAR_IMAGE", "PULSAR_BROADCAST_IMAGE", "PULSAR_BROADCAST_SOURCE", "COMPOSE_PROFILES",
                    "COMPOSE_FILE", "COMPOSE_PROJECT_NAME");

    private String text;
    private Map<String, Object> services;

    @BeforeClass
    public void load() {
        text = Build.read(Build.composeFile());
        Map<String, Object> root = new Yaml().load(text);
        services = map(root.get("services"));
    }

    public void everyMavenPlaceholderIsFilled() {
        assertFalse(Pattern.compile("@[A-Za-z.]+@").matcher(text).find(), text);
        assertTrue(text.contains("apachepulsar/pulsar:" + Build.pulsarVersion()), text);
    }

    public void hasTheClusterAndTheBench() {
        assertEquals(services.keySet(), Set.of("volume-permissions", "zookeeper", "pulsar-init", "bookie1", "bookie2",
                "bookie3", "broker1", "broker2", "bench"));
        assertTrue(String.join(" ", strings(map(services.get("pulsar-init")).get("command")))
                .contains("bin/pulsar initialize-cluster-metadata"));
    }

    public void bookiesHaveTwoJournalDirectoriesAndLedgersOnSeparateVolumes() {
        Set<String> allVolumes = new HashSet<>();
        for (String name : List.of("bookie1", "bookie2", "bookie3")) {
            Map<String, Object> bookie = map(services.get(name));
            Map<String, Object> env = map(bookie.get("environment"));
            assertEquals(env.get("PULSAR_PREFIX_journalDirectories"), "/pulsar/data/journal1,/pulsar/data/journal2",
                    name);
            assertEquals(env.get("PULSAR_PREFIX_ledgerDirectories"), "/pulsar/data/ledgers", name);
            assertEquals(env.get("PULSAR_PREFIX_advertisedAddress"), name);
            List<String> mounts = strings(bookie.get("volumes"));
            assertEquals(mounts.size(), 3, name + ": " + mounts);
            Set<String> targets = new HashSet<>();
            for (String mount : mounts) {
                String[] parts = mount.split(":");
                assertTrue(parts[0].startsWith(name + "-"), mount);
                assertTrue(allVolumes.add(parts[0]), "volume used twice: " + mount);
                targets.add(parts[1]);
            }
            assertEquals(targets, Set.of("/pulsar/data/journal1", "/pulsar/data/journal2", "/pulsar/data/ledgers"));
        }
        assertTrue(map(new Yaml().<Map<String, Object>>load(text).get("volumes")).keySet().containsAll(allVolumes));
    }

    public void brokersRunThePluginImage() {
        for (String name : List.of("broker1", "broker2")) {
            Map<String, Object> broker = map(services.get(name));
            assertEquals(broker.get("image"), "${PULSAR_BROADCAST_IMAGE:-" + Build.image() + "}", name);
            String context = (String) map(broker.get("build")).get("context");
            Path dockerfile = Build.composeFile().getParent().resolve(context).resolve("Dockerfile").normalize();
            assertEquals(dockerfile, Build.dockerContext().resolve("Dockerfile").normalize());
            assertTrue(Files.isRegularFile(dockerfile), dockerfile.toString());
            Map<String, Object> env = map(broker.get("environment"));
            assertEquals(env.get("brokerInterceptors"), "broadcast-subscription", name);
            assertEquals(env.get("PULSAR_PREFIX_advertisedAddress"), null);
            assertEquals(env.get("advertisedAddress"), name);
            assertTrue(String.join(" ", strings(broker.get("command"))).contains("bin/apply-config-from-env.py"));
        }
        assertNotEquals(map(services.get("broker1")).get("ports"), map(services.get("broker2")).get("ports"));
    }

    public void benchRunsTheBenchCommandAgainstBroker1() {
        Map<String, Object> bench = map(services.get("bench"));
        String command = String.join(" ", strings(bench.get("command"))).replaceAll("\\s+", " ");
        assertTrue(command.contains("bin/pulsar-broadcast --rebuild bench --service-url pulsar://broker1:6650"
                + " --admin-url http://broker1:8080 --preset quick"), command);
        assertEquals(strings(bench.get("profiles")), List.of("bench"));
    }

    /** The check the brief asks for: Docker Compose's own validation, offline. */
    public void dockerComposeAcceptsTheFile() {
        List<String> compose = composeCli();
        if (compose == null) {
            String message = "SKIPPED: neither 'docker compose' nor 'docker-compose' is installed, so "
                    + Build.composeFile() + " was not validated by Docker Compose (its structure was checked)";
            System.out.println(message);
            throw new SkipException(message);
        }
        List<String> command = new ArrayList<>(compose);
        command.addAll(List.of("-f", Build.composeFile().toString(), "--profile", "bench", "config", "-q"));
        Build.Result r = Build.run(command, COMPOSE_VARIABLES, 120);
        System.out.println(String.join(" ", command) + " -> exit code " + r.exitCode
                + (r.output.isBlank() ? "" : "\n" + r.output));
        assertEquals(r.exitCode, 0, "Docker Compose rejects " + Build.composeFile() + ": " + r);

        // And, resolved by Compose, the variables' defaults name the images of this build.
        List<String> resolve = new ArrayList<>(compose);
        resolve.addAll(List.of("-f", Build.composeFile().toString(), "--profile", "bench", "config"));
        Build.Result resolved = Build.run(resolve, COMPOSE_VARIABLES, 120);
        assertEquals(resolved.exitCode, 0, resolved.toString());
        assertTrue(resolved.output.contains("image: " + Build.image()), resolved.output);
        assertTrue(resolved.output.contains("image: apachepulsar/pulsar:" + Build.pulsarVersion()), resolved.output);
    }

    /** "docker compose" (v2 plugin) or "docker-compose" (v1), or null if neither runs. */
    private static List<String> composeCli() {
        if (Build.works("docker", "compose", "version")) {
            return List.of("docker", "compose");
        }
        if (Build.works("docker-compose", "version")) {
            return List.of("docker-compose");
        }
        return null;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object o) {
        assertTrue(o instanceof Map, String.valueOf(o));
        return (Map<String, Object>) o;
    }

    private static List<String> strings(Object o) {
        assertTrue(o instanceof List, String.valueOf(o));
        List<String> out = new ArrayList<>();
        for (Object item : (List<?>) o) {
            out.add(String.valueOf(item));
        }
        return out;
    }
}
