package io.github.pulsarbroadcast.bench;

/**
 * The run's health check, called between polls of a waiting phase: throws when the broker or a fleet process died or
 * this JVM's heap is exhausted, which ends the run as failed.
 *
 * <p>Threading: called on the main thread.
 */
interface HealthCheck {
    void check() throws Exception;
}
