package io.github.pulsarbroadcast.standalone.consumers;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;
import static org.testng.Assert.expectThrows;

import java.io.IOException;
import org.testng.annotations.Test;

/**
 * The consumers command follows a broker's redirect as {@code pulsar-admin} does, but never from https to http,
 * where its token would travel in clear (regression, forty-fourth session, found by a read-only review: it followed
 * any redirect with the token).
 *
 * <p>Threading: the test thread only.
 */
public class ListingClientTest {

    @Test(groups = "unit", timeOut = 10_000)
    public void aRedirectFromHttpsToHttpIsNotFollowed() {
        IOException e = expectThrows(IOException.class, () -> ListingClient.redirect(
                "https://broker-1:8443/broadcast/v1/x", "http://broker-2:8080/broadcast/v1/x"));
        assertTrue(e.getMessage().contains("not followed from https to http"), e.getMessage());
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void otherRedirectsAreFollowed() throws IOException {
        assertEquals(ListingClient.redirect("https://broker-1:8443/a/b?x=1", "https://broker-2:8443/a/b?x=1"),
                "https://broker-2:8443/a/b?x=1");
        assertEquals(ListingClient.redirect("http://broker-1:8080/a/b", "http://broker-2:8080/a/b"),
                "http://broker-2:8080/a/b");
        assertEquals(ListingClient.redirect("http://broker-1:8080/a/b", "/c"), "http://broker-1:8080/c");
    }
}
