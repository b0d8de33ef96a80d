package io.github.pulsarbroadcast.cluster;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.testng.annotations.AfterMethod;
import org.testng.annotations.BeforeMethod;
import org.testng.annotations.Test;

/**
 * {@code bin/pulsar-broadcast cluster} without starting anything: its help, and the clear refusals of bad commands,
 * options and node names. Cheap, so it runs in the default build.
 *
 * <p>Threading: TestNG's test thread only.
 */
@Test(groups = "unit")
public class ClusterScriptTest {

    private Path dir;
    private ClusterCommand cluster;

    @BeforeMethod
    public void emptyDirectory() throws IOException {
        dir = Files.createTempDirectory("cluster-script-");
        cluster = new ClusterCommand(dir.resolve("cluster"));
    }

    @AfterMethod(alwaysRun = true)
    public void deleteDirectory() throws IOException {
        Files.deleteIfExists(dir.resolve("cluster"));
        Files.deleteIfExists(dir);
    }

    @Test(timeOut = 60_000)
    public void helpNamesEveryCommand() {
        ClusterCommand.Result r = cluster.run("help");
        assertEquals(r.exitCode, 0, r.toString());
        for (String command : new String[] {"up", "status", "owner --topic", "down", "start NODE", "stop NODE",
            "kill NODE", "pause NODE", "resume NODE", "plugin install", "--topic", "--no-plugin", "--ports"}) {
            assertTrue(r.output.contains(command), command + " missing from:\n" + r.output);
        }
        ClusterCommand.Result top = ClusterCommand.exec(java.util.List.of("bash", ClusterCommand.script().toString(),
                "help"), 60);
        assertTrue(top.output.contains("cluster"), top.output);
    }

    @Test(timeOut = 60_000)
    public void refusesUnknownCommandsAndOptions() {
        assertRefused(cluster.run("launch"), "unknown command 'launch'");
        assertRefused(cluster.run("up", "--bogus"), "unknown option --bogus");
        assertRefused(cluster.run("up", "--brokers", "12"), "--brokers must be 1 to 9");
        assertRefused(cluster.run("up", "--bookies", "x"), "--bookies must be 1 to 9");
        assertRefused(cluster.run("up", "--ports", "fixed"), "--ports must be preferred or random");
        assertRefused(cluster.run("up", "--session-timeout-ms", "soon"), "--session-timeout-ms must be a number");
        assertRefused(cluster.run("up", "--broker-conf", "novalue"), "--broker-conf needs KEY=VALUE");
        assertRefused(cluster.run("up", "--pulsar-dist", dir.resolve("nowhere").toString()),
                "has no lib/ directory");
        assertFalse(Files.exists(dir.resolve("cluster").resolve("cluster.env")), "nothing laid out");
    }

    @Test(timeOut = 60_000)
    public void commandsOnAMissingClusterSayWhatToDo() {
        assertRefused(cluster.run("status"), "no cluster in " + dir.resolve("cluster"));
        assertRefused(cluster.run("kill", "broker-1"), "run 'bin/pulsar-broadcast cluster up' first");
        ClusterCommand.Result down = cluster.run("down");
        assertEquals(down.exitCode, 0, down.toString());
        assertTrue(down.output.contains("no cluster in"), down.output);
    }

    private static void assertRefused(ClusterCommand.Result r, String message) {
        assertEquals(r.exitCode, 1, r.toString());
        assertTrue(r.output.contains(message), "expected '" + message + "' in:\n" + r.output);
    }
}
