package io.github.pulsarbroadcast.it;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;

import io.github.pulsarbroadcast.standalone.EmbeddedPulsar;
import io.github.pulsarbroadcast.standalone.FileTrees;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionType;
import org.apache.pulsar.client.impl.MessageIdImpl;
import org.testng.annotations.AfterClass;
import org.testng.annotations.Test;

/**
 * The plugin beside another broker interceptor (an operator's auditing or tracing one, {@link CountingInterceptor},
 * loaded from its own NAR by {@code brokerInterceptors=broadcast-subscription,counting}), as design.md says: broadcast
 * sends then take the stock per-message path, so the other interceptor is told of every message dispatched to every
 * broadcast consumer and of every consumer created, as for a stock subscription; it is not told of broadcast
 * consumers' acknowledgements (the documented limitation: they never reach stock's per-consumer ack path).
 *
 * <p>Threading: TestNG's test thread only; the interceptor counts on the broker's threads.
 */
public class BroadcastWithAnotherInterceptorTest extends BroadcastTestBase {

    /** Both NARs, written once in set-up; deleted after the class. */
    private Path interceptors;

    @Override
    protected void configureBroker(ServiceConfiguration conf) {
        if (interceptors == null) {
            interceptors = twoInterceptorsDirectory();
        }
        conf.setBrokerInterceptorsDirectory(interceptors.toAbsolutePath().toString());
        conf.setBrokerInterceptors(Set.of(EmbeddedPulsar.INTERCEPTOR_NAME, CountingInterceptor.NAME));
    }

    @AfterClass(alwaysRun = true)
    public void deleteInterceptors() {
        if (interceptors != null) {
            FileTrees.deleteQuietly(interceptors);
        }
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void theOtherInterceptorIsToldOfEveryBroadcastDelivery() throws Exception {
        String topic = newTopic("two-interceptors");
        List<Consumer<String>> fleet = broadcastConsumers(topic, "fleet", 3);
        Consumer<String> stock = closeAfterTest(client.newConsumer(Schema.STRING).topic(topic)
                .subscriptionName("stock").subscriptionType(SubscriptionType.Failover).subscribe());
        List<String> sent;
        try (Producer<String> producer = producer(topic)) {
            sent = publish(producer, "m", 10);
        }
        assertEveryoneReceives(fleet, sent); // each message acknowledged
        MessageId last = null;
        for (Message<String> m : take(stock, 10)) {
            stock.acknowledge(m);
            last = m.getMessageId();
        }
        assertEquals(CountingInterceptor.created("fleet"), 3, "consumers created");
        assertEquals(CountingInterceptor.dispatched("fleet"), 30, "every message to every broadcast consumer");
        assertEquals(CountingInterceptor.dispatched("stock"), 10);
        // Stock tells it of every ack command (the client may group several messages' acks into one).
        await().atMost(Duration.ofSeconds(20)).until(() -> CountingInterceptor.acked("stock") > 0);

        MessageIdImpl lastId = (MessageIdImpl) last;
        PositionImpl lastPosition = PositionImpl.get(lastId.getLedgerId(), lastId.getEntryId());
        await("every broadcast ack applied").atMost(Duration.ofSeconds(20)).until(() ->
                !brokerSubscription(topic, "fleet").getConsumers().isEmpty() // not vacuous (an audit, 46th session)
                        && brokerSubscription(topic, "fleet").getConsumers().stream().allMatch(c ->
                        dispatcher(topic, "fleet").member(c).cursor().acknowledged().compareTo(lastPosition) >= 0));
        assertEquals(CountingInterceptor.acked("fleet"), 0, "design.md: broadcast acks are not passed on");
    }

    /** A directory with the plugin's NAR and one for {@link CountingInterceptor}, as an operator would lay it out. */
    private static Path twoInterceptorsDirectory() {
        try {
            Path dir = Files.createTempDirectory("two-interceptors");
            Files.copy(INTERCEPTORS.resolve("broadcast-subscription.nar"), dir.resolve("broadcast-subscription.nar"));
            String classFile = CountingInterceptor.class.getName().replace('.', '/') + ".class";
            ClassLoader loader = CountingInterceptor.class.getClassLoader();
            try (OutputStream out = Files.newOutputStream(dir.resolve(CountingInterceptor.NAME + ".nar"));
                    ZipOutputStream zip = new ZipOutputStream(out);
                    InputStream classBytes = loader.getResourceAsStream(classFile)) {
                // Stock's unpacker creates no parent directories: each gets an entry of its own, as in a jar.
                for (String d : List.of("META-INF/", "META-INF/services/")) {
                    zip.putNextEntry(new ZipEntry(d));
                }
                zip.putNextEntry(new ZipEntry("META-INF/services/broker_interceptor.yml"));
                zip.write(("name: " + CountingInterceptor.NAME + "\ndescription: counts interceptor calls\n"
                        + "interceptorClass: " + CountingInterceptor.class.getName() + "\n")
                        .getBytes(StandardCharsets.UTF_8));
                for (int slash = classFile.indexOf('/'); slash > 0; slash = classFile.indexOf('/', slash + 1)) {
                    zip.putNextEntry(new ZipEntry(classFile.substring(0, slash + 1)));
                }
                zip.putNextEntry(new ZipEntry(classFile));
                classBytes.transferTo(zip);
            }
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
