package io.github.pulsarbroadcast.bench;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertNotNull;
import static org.testng.Assert.assertNull;
import static org.testng.Assert.assertTrue;

import java.util.List;
import org.testng.annotations.Test;

/**
 * {@link FleetLayout}: consumers per connection, connections over processes and source addresses, and the up-front
 * refusal that names the open-file limit read from the OS.
 *
 * <p>Threading: the test thread only.
 */
@Test(groups = "unit")
public class FleetLayoutTest {

    private static BenchSettings settings(int perConnection, int processes, int perAddress) {
        BenchSettings s = new BenchSettings();
        s.client = "fleet";
        s.consumersPerConnection = perConnection;
        s.fleetProcesses = processes;
        s.connectionsPerAddress = perAddress;
        return s;
    }

    @Test(timeOut = 10_000)
    public void spreadsWholeConnectionsOverProcesses() {
        FleetLayout l = FleetLayout.of(settings(3, 2, 0), 20);
        assertEquals(l.connections, 7);
        assertEquals(l.processes, 2);
        assertEquals(l.parts.get(0).firstConsumer, 0);
        assertEquals(l.parts.get(0).consumers + l.parts.get(1).consumers, 20);
        assertEquals(l.parts.get(1).firstConsumer % 3, 0, "a connection is never split");
        assertEquals(l.parts.get(1).firstConnection, l.parts.get(1).firstConsumer / 3);
        assertEquals(l.sourceAddresses(), 1);
    }

    @Test(timeOut = 10_000)
    public void usesMoreSourceAddressesWhenAsked() {
        FleetLayout l = FleetLayout.of(settings(3, 1, 3), 20);
        assertEquals(l.sourceAddresses(), 3);
        assertTrue(l.describe().contains("3 source address"), l.describe());
    }

    @Test(timeOut = 10_000)
    public void refusesMoreConnectionsThanTheFileLimitAllowsAndNamesIt() {
        long limit = OsLimits.openFiles();
        if (limit < 0) {
            return; // no /proc here: nothing to check against
        }
        int n = (int) Math.min(Integer.MAX_VALUE, limit + 10);
        String problem = FleetLayout.of(settings(1, 1, 0), n).problem(-1);
        assertNotNull(problem);
        assertTrue(problem.contains(String.format("%,d", limit)), problem);
        String broker = FleetLayout.of(settings(1, 0, 0), n).problem(limit);
        assertNotNull(broker, "spread over fleet processes, the broker's own limit still applies");
        assertTrue(broker.contains("broker"), broker);
        assertNull(FleetLayout.of(settings(100, 0, 0), n).problem(limit));
    }

    @Test(timeOut = 10_000)
    public void validationRefusesUpFront() {
        BenchSettings s = settings(1, 1, 0);
        long limit = OsLimits.openFiles();
        if (limit < 0) {
            return;
        }
        s.consumers = List.of((int) Math.min(Integer.MAX_VALUE, limit + 10));
        String problem = s.validate();
        assertNotNull(problem);
        assertTrue(problem.contains("open-file limit"), problem);
        s.client = "java";
        assertNull(s.validate(), "the stock client multiplexes its consumers over a few connections");
    }
}
