package io.github.pulsarbroadcast.bench.fleet;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.expectThrows;

import java.net.InetSocketAddress;
import org.testng.annotations.Test;

/**
 * The fleet takes a service URL as the stock client does, through pulsar-common's {@code ServiceURI}: one host or
 * several ({@code --service-url} of a cluster, so that lookups go on when one broker is gone), a host without a port on
 * 6650, and a URL without a host refused.
 *
 * <p>Threading: TestNG's test thread only.
 */
@Test(groups = "unit")
public class ServiceAddressesTest {

    @Test(timeOut = 10_000)
    public void oneHost() {
        assertEquals(FleetEngine.serviceAddresses("pulsar://127.0.0.1:6651"),
                new InetSocketAddress[] {new InetSocketAddress("127.0.0.1", 6651)});
    }

    @Test(timeOut = 10_000)
    public void severalHostsInTheirOrderAndTheDefaultPort() {
        assertEquals(FleetEngine.serviceAddresses("pulsar://127.0.0.1:6650,127.0.0.2:6652,localhost"),
                new InetSocketAddress[] {new InetSocketAddress("127.0.0.1", 6650),
                    new InetSocketAddress("127.0.0.2", 6652), new InetSocketAddress("localhost", 6650)});
    }

    @Test(timeOut = 10_000)
    public void aUrlWithoutAHost() {
        expectThrows(IllegalArgumentException.class, () -> FleetEngine.serviceAddresses("http://"));
    }
}
