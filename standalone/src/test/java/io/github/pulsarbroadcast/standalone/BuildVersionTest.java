package io.github.pulsarbroadcast.standalone;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.testng.annotations.Test;
import picocli.CommandLine;

/**
 * {@code --version} prints the build's own version. Regression (forty-third session, a review): it printed a
 * hard-coded release, "2.10.5.0", on every snapshot build.
 */
public class BuildVersionTest {

    @Test(groups = "unit", timeOut = 30_000)
    public void theCommandPrintsTheBuildsVersion() throws IOException {
        String version = BuildVersion.get();
        Matcher pom = Pattern.compile("<parent>.*?<version>([^<]+)</version>", Pattern.DOTALL)
                .matcher(Files.readString(Path.of("pom.xml")));
        assertTrue(pom.find(), "the module's pom names its parent's version");
        assertEquals(version, pom.group(1), "the project version");
        for (String[] args : new String[][] {{"--version"}, {"standalone", "--version"}, {"consumers", "--version"}}) {
            StringWriter out = new StringWriter();
            CommandLine cli = new CommandLine(new Main());
            cli.setOut(new PrintWriter(out));
            assertEquals(cli.execute(args), 0);
            assertEquals(out.toString().trim(), "pulsar-broadcast " + version, String.join(" ", args));
        }
    }
}
