package io.github.pulsarbroadcast.standalone;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import org.testng.annotations.Test;
import picocli.CommandLine;

/**
 * Bad options of {@code pulsar-broadcast standalone} are refused before anything starts, naming the option (and the
 * key of a {@code --config} file). Each refusal below is checked before ZooKeeper, the bookie or the broker would
 * start: the command returns 2 at once.
 *
 * <p>Threading: the test thread only.
 */
public class StandaloneOptionsTest {

    @Test(groups = "unit", timeOut = 30_000)
    public void aConfigFileThatDoesNotExistIsRefusedByName() {
        String err = refused("--no-plugin", "--port", "0", "--web-port", "0", "--zookeeper-port", "0",
                "--bookie-port", "0", "--config", "/nonexistent/broker.conf");
        assertTrue(err.startsWith("--config /nonexistent/broker.conf: no such readable file"), err);
    }

    /**
     * A stock broker.conf sets keys the command owns: applied over the command's settings, its empty
     * {@code brokerInterceptors=} unloaded the plugin while the banner said it ran, and its {@code bindAddress} beat
     * {@code --bind-address} (regression, forty-fourth session: such a file was accepted).
     */
    @Test(groups = "unit", timeOut = 30_000)
    public void aConfigFileSettingAKeyTheCommandOwnsIsRefusedNamingTheKey() throws Exception {
        Path file = Files.createTempFile("standalone-", ".conf");
        try {
            Files.writeString(file, "broadcastExecutorThreads=2\nbrokerInterceptors=\n");
            String err = refused("--no-plugin", "--port", "0", "--web-port", "0", "--zookeeper-port", "0",
                    "--bookie-port", "0", "--config", file.toString());
            assertTrue(err.startsWith("--config " + file + ": key 'brokerInterceptors' is set by this command"), err);
            Files.writeString(file, "bindAddress=0.0.0.0\n");
            err = refused("--no-plugin", "--port", "0", "--web-port", "0", "--zookeeper-port", "0",
                    "--bookie-port", "0", "--config", file.toString());
            assertTrue(err.contains("key 'bindAddress' is set by this command (use --bind-address)"), err);
            Files.writeString(file, "broadcastExecutorThreads=2\nmanagedLedgerMaxEntriesPerLedger=10\n");
            Properties p = BrokerConfFile.read(file);
            assertEquals(BrokerConfFile.problem(file), null, "broker and plugin keys are accepted");
            assertEquals(p.getProperty("broadcastExecutorThreads"), "2");
        } finally {
            Files.deleteIfExists(file);
        }
    }

    /** Before, a bad or busy port failed seconds later, after ZooKeeper and the bookie started, naming no option. */
    @Test(groups = "unit", timeOut = 30_000)
    public void badOrBusyPortsAreRefusedNamingTheOption() throws Exception {
        String err = refused("--no-plugin", "--port", "70000");
        assertTrue(err.startsWith("--port 70000: not a TCP port (0-65535"), err);
        err = refused("--no-plugin", "--port", "0", "--web-port", "0", "--zookeeper-port", "0",
                "--bookie-port", "-1");
        assertTrue(err.startsWith("--bookie-port -1: not a TCP port"), err);
        try (ServerSocket busy = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            int taken = busy.getLocalPort();
            err = refused("--no-plugin", "--port", "0", "--web-port", Integer.toString(taken));
            assertTrue(err.startsWith("--web-port " + taken + ": cannot listen on 127.0.0.1"), err);
        }
        String same = refused("--no-plugin", "--port", "0", "--web-port", "0", "--zookeeper-port", "4181",
                "--bookie-port", "4181");
        assertTrue(same.startsWith("--bookie-port 4181: the same port as --zookeeper-port"), same);
    }

    private static String refused(String... args) {
        StringWriter err = new StringWriter();
        CommandLine cmd = new CommandLine(new StandaloneCommand()).setErr(new PrintWriter(err));
        int code = cmd.execute(args);
        assertEquals(code, 2, err.toString());
        return err.toString();
    }
}
