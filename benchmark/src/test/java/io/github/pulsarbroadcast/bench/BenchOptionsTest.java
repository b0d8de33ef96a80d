package io.github.pulsarbroadcast.bench;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertTrue;
import static org.testng.Assert.expectThrows;

import picocli.CommandLine;
import org.testng.annotations.Test;

/**
 * {@link BenchCommand}'s options as picocli parses them, the fleet's ({@link FleetOptions}, a mixin) included: each
 * given option lands in the settings, one left out keeps the preset's value, and a bad value is refused with a message
 * that names the option.
 *
 * <p>Threading: the test thread only.
 */
@Test(groups = "unit")
public class BenchOptionsTest {

    private static BenchSettings parse(String... args) {
        BenchCommand command = new BenchCommand("bench");
        new CommandLine(command).parseArgs(args);
        return command.settings();
    }

    @Test(timeOut = 10_000)
    public void fleetOptionsReachTheSettings() {
        BenchSettings s = parse("--client", "fleet", "--consumers-per-connection", "100", "--connect-rate", "500",
                "--no-lookup", "--ack", "cumulative", "--ack-flush", "message", "--fleet-processes", "3",
                "--fleet-threads", "2", "--fleet-java-opts", "-Xmx1g", "--connections-per-address", "7",
                "--out", "target/bench-options");
        assertEquals(s.client, "fleet");
        assertEquals(s.consumersPerConnection, 100);
        assertEquals(s.connectRate, 500.0);
        assertFalse(s.lookup);
        assertTrue(s.ackCumulative);
        assertTrue(s.flushEveryAck);
        assertEquals(s.fleetProcesses, 3);
        assertEquals(s.fleetThreads, 2);
        assertEquals(s.fleetJavaOpts, "-Xmx1g");
        assertEquals(s.connectionsPerAddress, 7);
    }

    @Test(timeOut = 10_000)
    public void optionsLeftOutKeepThePresetsValues() {
        BenchSettings preset = Preset.parse("quick").settings();
        BenchSettings s = parse("--preset", "quick", "--out", "target/bench-options");
        assertEquals(s.consumersPerConnection, preset.consumersPerConnection);
        assertEquals(s.lookup, preset.lookup);
        assertEquals(s.ackCumulative, preset.ackCumulative);
        assertEquals(s.flushEveryAck, preset.flushEveryAck);
        assertEquals(s.fleetJavaOpts, preset.fleetJavaOpts);
    }

    @Test(timeOut = 10_000)
    public void badValuesNameTheOption() {
        CommandLine.ParameterException ack = expectThrows(CommandLine.ParameterException.class,
                () -> parse("--client", "fleet", "--ack", "sometimes"));
        assertTrue(ack.getMessage().contains("--ack is 'individual' or 'cumulative'"), ack.getMessage());
        CommandLine.ParameterException flush = expectThrows(CommandLine.ParameterException.class,
                () -> parse("--client", "fleet", "--ack-flush", "never"));
        assertTrue(flush.getMessage().contains("--ack-flush is 'read' or 'message'"), flush.getMessage());
    }
}
