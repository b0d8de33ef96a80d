/**
 * An embedded Pulsar cluster in one JVM (ZooKeeper, bookies and stock brokers that load the pulsar-broadcast NAR
 * by configuration) and the {@code bin/pulsar-broadcast standalone} command built on it.
 */
package io.github.pulsarbroadcast.standalone;
