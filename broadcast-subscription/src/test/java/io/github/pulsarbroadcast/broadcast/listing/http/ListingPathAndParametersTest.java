package io.github.pulsarbroadcast.broadcast.listing.http;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertTrue;
import static org.testng.Assert.expectThrows;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.testng.annotations.Test;

/** The listing's URL: path parsing, repeated parameters, the authoritative flag of a redirect. */
@Test(groups = "unit")
public class ListingPathAndParametersTest {

    @Test(timeOut = 10_000)
    public void parsesTheStockStylePath() {
        ListingPath p = ListingPath.parse("/v1/persistent/public/default/alerts/subscription/fleet/consumers");
        assertEquals(p.topic(), "persistent://public/default/alerts");
        assertEquals(p.subscription(), "fleet");
        ListingPath encoded = ListingPath.parse("/v1/persistent/public/default/a%20b/subscription/x%2Fy/consumers");
        assertEquals(encoded.topic(), "persistent://public/default/a b");
        assertEquals(encoded.subscription(), "x/y");
    }

    @Test(timeOut = 10_000)
    public void refusesOtherPaths() {
        for (String bad : new String[] {null, "", "/", "/v1/persistent/public/default/t/subscription/s",
                "/v2/persistent/public/default/t/subscription/s/consumers",
                "/v1/non-persistent/public/default/t/subscription/s/consumers",
                "/v1/persistent/public/default/t/subscription//consumers",
                "/v1/persistent/public/default/t/subscription/s/consumers/x"}) {
            IllegalArgumentException e = expectThrows(IllegalArgumentException.class, () -> ListingPath.parse(bad));
            assertTrue(e.getMessage().contains(ListingPath.FORM), bad + " -> " + e.getMessage());
        }
    }

    @Test(timeOut = 10_000)
    public void repeatedParameters() {
        assertEquals(Parameters.of(Map.of("state", new String[] {"IDLE", "WAITING"})).get("state"), "IDLE,WAITING");
        IllegalArgumentException e = expectThrows(IllegalArgumentException.class,
                () -> Parameters.of(Map.of("limit", new String[] {"1", "2"})));
        assertTrue(e.getMessage().contains("'limit' given 2 times"), e.getMessage());
    }

    @Test(timeOut = 10_000)
    public void authoritativeFlag() {
        assertFalse(Parameters.authoritative(Map.of()));
        assertTrue(Parameters.authoritative(Map.of("authoritative", "TRUE")));
        expectThrows(IllegalArgumentException.class, () -> Parameters.authoritative(Map.of("authoritative", "y")));
        assertEquals(Parameters.withAuthoritative(null, true), "authoritative=true");
        assertEquals(Parameters.withAuthoritative("sort=lag&authoritative=false&limit=5", true),
                "sort=lag&limit=5&authoritative=true");
    }

    /**
     * The servlet is loaded by a class loader of its own: the classes it uses (this package and the listing) must
     * not name any of the plugin's other packages, whose classes it would get from another loader.
     */
    @Test(timeOut = 10_000)
    public void servletSideNamesNoPluginClassOutsideTheListing() throws IOException {
        Class<?>[] classes = {ConsumerListingServlet.class, ListingHttpServlet.class, BrokerSide.class,
            ListingPath.class, Parameters.class, HttpError.class,
            io.github.pulsarbroadcast.broadcast.listing.ListingQuery.class,
            io.github.pulsarbroadcast.broadcast.listing.ConsumerListing.class,
            io.github.pulsarbroadcast.broadcast.listing.ConsumerRow.class};
        for (Class<?> c : classes) {
            String name = c.getName().replace('.', '/');
            try (InputStream in = c.getClassLoader().getResourceAsStream(name + ".class")) {
                String bytes = new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
                for (String other : new String[] {"dispatch", "cursor", "cnx", "plugin", "positions", "executor"}) {
                    assertFalse(bytes.contains("io/github/pulsarbroadcast/broadcast/" + other + "/"),
                            c.getSimpleName() + " names the plugin package " + other);
                }
                assertFalse(bytes.contains("io/github/pulsarbroadcast/executor/"), c.getSimpleName());
            }
        }
    }
}
