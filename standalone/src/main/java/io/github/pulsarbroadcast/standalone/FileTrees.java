package io.github.pulsarbroadcast.standalone;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * Deletes directory trees that the embedded cluster (or a test beside it) created.
 *
 * <p>Threading: stateless; any thread.
 */
public final class FileTrees {

    private FileTrees() {
    }

    /** Deletes {@code root} and everything below it; files that cannot be deleted are left in place. */
    public static void deleteQuietly(Path root) {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // Best effort: this runs in tear-downs, where a leftover temporary file must not fail anything.
        }
    }
}
