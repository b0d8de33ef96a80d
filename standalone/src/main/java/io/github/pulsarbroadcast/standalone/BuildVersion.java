package io.github.pulsarbroadcast.standalone;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import picocli.CommandLine.IVersionProvider;

/**
 * The version the commands print ({@code --version}): the build's own, {@code version.txt} filled in by Maven, so a
 * snapshot build says so.
 *
 * <p>Threading: stateless; any thread.
 */
public final class BuildVersion implements IVersionProvider {

    /** The project version of this build, for example {@code 2.10.5.0} or {@code 2.10.5.0-SNAPSHOT}. */
    public static String get() {
        try (InputStream in = BuildVersion.class.getResourceAsStream("version.txt")) {
            if (in == null) {
                throw new IllegalStateException("version.txt is missing from the standalone module's classes");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public String[] getVersion() {
        return new String[] {"pulsar-broadcast " + get()};
    }
}
