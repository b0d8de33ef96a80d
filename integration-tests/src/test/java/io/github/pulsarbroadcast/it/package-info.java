/**
 * Integration tests: real ZooKeeper, BookKeeper and Pulsar brokers in the test JVM ({@code EmbeddedPulsar}), with
 * the plugin loaded from its NAR in {@code target/interceptors}, and real Pulsar clients.
 */
package io.github.pulsarbroadcast.it;
