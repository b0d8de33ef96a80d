package io.github.pulsarbroadcast.cluster;

/**
 * The chaos tests' clock: milliseconds since this class was loaded, from {@link System#nanoTime()} (monotonic), small
 * enough for an int.
 *
 * <p>Threading: stateless apart from the start instant; any thread.
 */
final class Millis {

    private static final long START = System.nanoTime();

    private Millis() {
    }

    static int now() {
        return (int) ((System.nanoTime() - START) / 1_000_000L);
    }
}
