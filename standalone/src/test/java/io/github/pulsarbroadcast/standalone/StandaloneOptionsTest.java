package io.github.pulsarbroadcast.standalone;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.testng.annotations.Test;
import picocli.CommandLine;

/**
 * Bad options of {@code pulsar-broadcast standalone} are refused before anything starts, naming the option.
 *
 * <p>Threading: the test thread only.
 */
public class StandaloneOptionsTest {

    @Test(groups = "unit", timeOut = 30_000)
    public void aConfigFileThatDoesNotExistIsRefusedByName() {
        StringWriter err = new StringWriter();
        CommandLine cmd = new CommandLine(new StandaloneCommand()).setErr(new PrintWriter(err));
        int code = cmd.execute("--no-plugin", "--config", "/nonexistent/broker.conf");
        assertEquals(code, 2, err.toString());
        assertTrue(err.toString().startsWith("--config /nonexistent/broker.conf: no such readable file"), err.toString());
    }
}
