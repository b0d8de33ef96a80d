package io.github.pulsarbroadcast.cluster;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;

import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.testng.SkipException;
import org.testng.annotations.AfterClass;
import org.testng.annotations.BeforeClass;
import org.testng.annotations.Test;

/**
 * The broker image built and run: a stand-in for apachepulsar/pulsar:2.10.5 made from Debian's packages and the
 * Pulsar jars of Maven Central (docker/target/standin/make-standin-image.sh), the project's image built on it from
 * docker/target/docker-context, and the compose cluster of docker-compose.host.yml started from both (host network,
 * 127.0.0.1 ports only), a broadcast subscription served through it, then taken down. Skipped, with the reason, where
 * no Docker engine can run (docker/target/standin/ensure-docker.sh installs and starts one when it can).
 *
 * <p>Threading: TestNG's test thread only.
 */
@Test(groups = "docker")
public class ImageComposeTest {

    private static final String STANDIN = "pulsar-standin:2.10.5";
    private static final String PROJECT = "pbimage";

    private final Path docker = Path.of(ClusterCommand.property("pulsar.broadcast.root"), "docker", "target")
            .toAbsolutePath().normalize();
    private final Map<String, String> ports = new LinkedHashMap<>();
    private List<String> compose;
    private boolean started;

    @BeforeClass(alwaysRun = true, timeOut = 1_800_000)
    public void buildImagesAndStartTheCluster() throws Exception {
        ClusterCommand.Result engine = run(List.of("bash", docker.resolve("standin/ensure-docker.sh").toString(),
                "--debootstrap"), 900);
        System.out.println("DOCKER " + engine.output.trim().replace('\n', ' '));
        if (engine.exitCode == 3) {
            throw new SkipException(engine.output.trim());
        }
        check(engine);
        long t0 = System.nanoTime();
        check(run(List.of("bash", docker.resolve("standin/make-standin-image.sh").toString(),
                ClusterCommand.property("pulsar.broadcast.pulsar-dist") + "/lib", STANDIN), 1500));
        System.out.printf("DOCKER stand-in base image %s in %.0f s%n", STANDIN, (System.nanoTime() - t0) / 1e9);
        t0 = System.nanoTime();
        check(run(List.of("bash", docker.resolve("docker-context/build.sh").toString(), "--network", "host",
                "--build-arg", "PULSAR_IMAGE=" + STANDIN), 900));
        System.out.printf("DOCKER project image %s built on it in %.0f s%n", image(), (System.nanoTime() - t0) / 1e9);
        for (String name : List.of("ZK_PORT", "BOOKIE1_PORT", "BOOKIE2_PORT", "BOOKIE3_PORT", "BROKER1_PORT",
                "BROKER2_PORT", "BROKER1_HTTP_PORT", "BROKER2_HTTP_PORT")) {
            ports.put(name, String.valueOf(freePort()));
        }
        compose = composeCommand();
        t0 = System.nanoTime();
        started = true;
        check(run(composeArgs("up", "-d"), 900));
        for (String http : List.of("BROKER1_HTTP_PORT", "BROKER2_HTTP_PORT")) {
            await("broker on port " + ports.get(http) + " ready").atMost(Duration.ofMinutes(5))
                    .pollInterval(Duration.ofSeconds(2)).ignoreExceptions()
                    .until(() -> "ok".equals(get("http://127.0.0.1:" + ports.get(http) + "/admin/v2/brokers/ready")));
        }
        System.out.printf("DOCKER compose cluster (host network) up in %.0f s, ports %s%n",
                (System.nanoTime() - t0) / 1e9, ports);
    }

    @AfterClass(alwaysRun = true, timeOut = 600_000)
    public void takeItDown() {
        if (started) {
            ClusterCommand.Result r = run(composeArgs("down", "-v"), 300);
            System.out.println("DOCKER compose down: exit code " + r.exitCode);
        }
    }

    @Test(timeOut = 300_000)
    public void brokersLoadThePluginAndServeABroadcastSubscription() throws Exception {
        for (String broker : List.of("broker1", "broker2")) {
            String logs = check(run(composeArgs("logs", "--no-color", broker), 120)).output;
            assertTrue(logs.contains("pulsar-broadcast installed its connection handler"), broker + ":\n" + logs);
        }
        String serviceUrl = "pulsar://127.0.0.1:" + ports.get("BROKER1_PORT") + ",127.0.0.1:"
                + ports.get("BROKER2_PORT");
        String topic = "persistent://public/default/image-alerts";
        try (PulsarClient client = PulsarClient.builder().serviceUrl(serviceUrl).build()) {
            List<Consumer<String>> consumers = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                consumers.add(Broadcast.configure(client.newConsumer(Schema.STRING)).topic(topic)
                        .subscriptionName("alerts").consumerName("vehicle-" + i).subscribe());
            }
            try (Producer<String> producer = client.newProducer(Schema.STRING).topic(topic).create()) {
                for (int m = 0; m < 5; m++) {
                    producer.send("road damage at km " + m);
                }
            }
            for (Consumer<String> c : consumers) {
                for (int m = 0; m < 5; m++) {
                    Message<String> msg = c.receive(30, TimeUnit.SECONDS);
                    assertEquals(msg == null ? null : msg.getValue(), "road damage at km " + m, c.getConsumerName());
                    c.acknowledge(msg);
                }
            }
        }
        System.out.println("DOCKER a broadcast subscription served by the compose cluster: 3 consumers got all 5");
    }

    private String image() throws IOException {
        return Files.readString(docker.resolve("docker-context/IMAGE")).trim();
    }

    private List<String> composeCommand() {
        if (run(List.of("docker", "compose", "version"), 60).exitCode == 0) {
            return List.of("docker", "compose");
        }
        return List.of("docker-compose");
    }

    private List<String> composeArgs(String... args) {
        List<String> command = new ArrayList<>(List.of("env"));
        ports.forEach((k, v) -> command.add(k + "=" + v));
        command.add("PULSAR_IMAGE=" + STANDIN);
        try {
            command.add("PULSAR_BROADCAST_IMAGE=" + image());
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        command.addAll(compose);
        command.addAll(List.of("-p", PROJECT, "-f", docker.resolve("compose/docker-compose.host.yml").toString()));
        command.addAll(List.of(args));
        return command;
    }

    private static ClusterCommand.Result run(List<String> command, long timeoutSeconds) {
        return ClusterCommand.exec(command, timeoutSeconds);
    }

    private static ClusterCommand.Result check(ClusterCommand.Result r) {
        if (r.exitCode != 0) {
            throw new AssertionError(r.toString());
        }
        return r;
    }

    private static String get(String url) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(url))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
        return r.body().trim();
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
