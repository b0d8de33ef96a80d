/**
 * The broadcast subscription plugin for Apache Pulsar 2.10: the broker interceptor that a stock broker loads from
 * its NAR, the plugin's typed configuration, and the names clients use to select a broadcast subscription.
 *
 * <p>Sub-packages: {@code cnx} (the connection handler that routes broadcast commands), {@code client} (a helper for
 * Java clients).
 */
package io.github.pulsarbroadcast.broadcast;
