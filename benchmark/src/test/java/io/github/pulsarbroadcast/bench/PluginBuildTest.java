package io.github.pulsarbroadcast.bench;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import org.testng.annotations.Test;

/**
 * The report names the plugin build the broker's class path carries: the jar's path, modification time and SHA-256
 * prefix; a classes directory by its path; and says so when the class path has none.
 *
 * <p>Threading: the test thread only.
 */
@Test(groups = "unit")
public class PluginBuildTest {

    @Test(timeOut = 10_000)
    public void aJarIsNamedWithItsTimeAndDigest() throws Exception {
        Path dir = Files.createTempDirectory("plugin-build");
        Path jar = dir.resolve("broadcast-subscription-2.10.5.0-SNAPSHOT.jar");
        Files.write(jar, "abc".getBytes(StandardCharsets.US_ASCII));
        Files.setLastModifiedTime(jar, FileTime.from(Instant.parse("2026-11-24T14:23:05.5Z")));
        Path other = dir.resolve("pulsar-broker-2.10.5.jar");
        String cp = other + File.pathSeparator + jar;
        // SHA-256 of "abc" starts with ba7816bf8f01
        assertEquals(PluginBuild.describe(cp, File.pathSeparator),
                jar + " (modified 2026-11-24T14:23:05Z, SHA-256 ba7816bf8f01)");
    }

    @Test(timeOut = 10_000)
    public void aClassesDirectoryOrNothing() {
        String classes = String.join(File.separator, "", "work", "broadcast-subscription", "target", "classes");
        assertEquals(PluginBuild.describe("a.jar" + File.pathSeparator + classes, File.pathSeparator),
                "classes directory " + classes);
        assertTrue(PluginBuild.describe("a.jar" + File.pathSeparator + "b.jar", File.pathSeparator)
                .startsWith("not on the broker's class path"));
    }
}
