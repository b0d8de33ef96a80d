package io.github.pulsarbroadcast.it;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertNotSame;
import static org.testng.Assert.assertSame;

import io.github.pulsarbroadcast.broadcast.listing.http.ConsumerListingServlet;
import java.io.File;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.pulsar.broker.web.plugin.servlet.AdditionalServletWithPulsarService;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.common.nar.NarClassLoader;
import org.apache.pulsar.common.nar.NarClassLoaderBuilder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.servlet.ServletContextHandler;
import org.testng.annotations.AfterClass;
import org.testng.annotations.Test;

/**
 * The listing servlet works when it cannot see the plugin's classes that the broker interceptor uses: as on a broker
 * whose {@code lib/} does not hold the plugin's jars, where the interceptor and the servlet come from two NAR class
 * loaders. Here the servlet is loaded from the plugin's NAR by a NAR class loader whose parent hides every
 * {@code io.github.pulsarbroadcast} class (the test JVM's class path has them, as a broker's {@code lib/} may), so its
 * classes are copies of their own; it is served by a Jetty server of its own and asked about a live broadcast
 * subscription of the real broker. Only JDK types cross between the two.
 *
 * <p>Threading: TestNG's test thread; Jetty's threads serve the request.
 */
public class ListingAcrossClassLoadersTest extends BroadcastTestBase {

    private Server jetty;
    private NarClassLoader narLoader;

    /** Delegates to the application class loader except for the plugin's classes. */
    private static final class HidingPluginClasses extends ClassLoader {
        HidingPluginClasses(ClassLoader parent) {
            super(parent);
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (name.startsWith("io.github.pulsarbroadcast.")) {
                throw new ClassNotFoundException(name + " is hidden from the servlet's class loader");
            }
            return super.loadClass(name, resolve);
        }
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void servletFromItsOwnClassLoaderListsTheLiveSubscription() throws Exception {
        String topic = newTopic("loaders");
        List<Consumer<String>> consumers = new ArrayList<>();
        try {
            consumers.add(broadcastConsumer(topic, "fleet", "vehicle-a"));
            consumers.add(broadcastConsumer(topic, "fleet", "vehicle-b"));

            File nar = Path.of(System.getProperty("pulsar.broadcast.interceptors", "target/interceptors"))
                    .resolve("broadcast-subscription.nar").toFile();
            Path extraction = Files.createTempDirectory("listing-nar-");
            narLoader = NarClassLoaderBuilder.builder().narFile(nar)
                    .parentClassLoader(new HidingPluginClasses(AdditionalServletWithPulsarService.class
                            .getClassLoader()))
                    .extractionDirectory(extraction.toString()).build();
            Class<?> servletClass = narLoader.loadClass(ConsumerListingServlet.class.getName());
            assertNotSame(servletClass, ConsumerListingServlet.class);
            assertSame(servletClass.getClassLoader(), narLoader);
            assertNotSame(brokerSubscription(topic, "fleet").getClass().getClassLoader(), narLoader);

            AdditionalServletWithPulsarService servlet =
                    (AdditionalServletWithPulsarService) servletClass.getDeclaredConstructor().newInstance();
            servlet.setPulsarService(cluster.broker());
            jetty = new Server(new InetSocketAddress("127.0.0.1", 0));
            ServletContextHandler context = new ServletContextHandler();
            context.setContextPath(servlet.getBasePath());
            context.addServlet(servlet.getServletHolder(), "/*");
            jetty.setHandler(context);
            jetty.start();
            String web = "http://127.0.0.1:" + ((ServerConnector) jetty.getConnectors()[0]).getLocalPort();

            ListingHttp.Answer answer = ListingHttp.get(ListingHttp.url(web, topic, "fleet", "sort=name"), null);
            assertEquals(answer.status, 200, answer.toString());
            assertEquals(answer.body.get("total").asInt(), 2);
            assertEquals(answer.body.get("consumers").get(0).get("name").asText(), "vehicle-a");
            assertEquals(answer.body.get("consumers").get(1).get("name").asText(), "vehicle-b");
            ListingHttp.Answer bad = ListingHttp.get(ListingHttp.url(web, topic, "fleet", "sort=x"), null);
            assertEquals(bad.status, 400, bad.toString());
        } finally {
            closeAll(consumers);
        }
    }

    @AfterClass(alwaysRun = true)
    public void stopJetty() throws Exception {
        if (jetty != null) {
            jetty.stop();
            jetty = null;
        }
        if (narLoader != null) {
            narLoader.close();
            narLoader = null;
        }
    }
}
