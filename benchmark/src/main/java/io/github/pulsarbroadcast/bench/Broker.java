package io.github.pulsarbroadcast.bench;

/**
 * The broker a run talks to: one this tool started ({@link ForkedBroker}) or an existing cluster
 * ({@link ExternalBroker}).
 *
 * <p>Threading: implementations are driven by the main thread; {@link #alive} may be called from any thread.
 */
interface Broker extends AutoCloseable {

    String serviceUrl();

    String adminUrl();

    /** The broker's process id when known (for CPU and memory figures), else null. */
    Long pid();

    /** False once the broker process has exited (always true for an external cluster). */
    boolean alive();

    /** Why the broker is no longer alive (exit code, log file), for the report. */
    String deathReason();

    /** The first out-of-memory line the broker logged, or null. */
    String memoryTrouble();

    /** Stops the broker if this tool started it. */
    @Override
    void close();
}
