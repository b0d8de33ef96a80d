package io.github.pulsarbroadcast.bench;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/**
 * Names the build of the plugin that the benchmark's broker runs. The broker's class path carries the plugin's jar
 * (as a distribution's lib/ would), and the NAR's class loader asks its parent first, so the classes come from that
 * jar, not from the NAR: after {@code ./mvnw verify} without {@code install}, the local Maven repository's jar is the
 * previously installed build. The report prints the jar's name, modification time and SHA-256 prefix so that a run
 * on a stale build is visible.
 *
 * <p>Threading: stateless; any thread.
 */
final class PluginBuild {

    /** The plugin module's artifact id, the start of its jar's file name. */
    static final String ARTIFACT = "broadcast-subscription";

    private PluginBuild() {
    }

    /** Describes the first entry of {@code classPath} (separated by {@code separator}) that holds the plugin. */
    static String describe(String classPath, String separator) {
        for (String entry : classPath.split(separator)) {
            Path p = Path.of(entry);
            Path name = p.getFileName();
            if (name != null && name.toString().startsWith(ARTIFACT) && name.toString().endsWith(".jar")) {
                return jar(p);
            }
            if (entry.contains(ARTIFACT + File.separator + "target" + File.separator + "classes")) {
                return "classes directory " + entry;
            }
        }
        return "not on the broker's class path (loaded from the NAR)";
    }

    private static String jar(Path jar) {
        try {
            Instant modified = Files.getLastModifiedTime(jar).toInstant().truncatedTo(ChronoUnit.SECONDS);
            return jar + " (modified " + modified + ", SHA-256 " + sha256(jar).substring(0, 12) + ")";
        } catch (IOException e) {
            return jar + " (unreadable: " + e.getMessage() + ")";
        }
    }

    private static String sha256(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            byte[] buf = new byte[1 << 16];
            for (int n = in.read(buf); n >= 0; n = in.read(buf)) {
                digest.update(buf, 0, n);
            }
            return String.format("%064x", new BigInteger(1, digest.digest()));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
