/**
 * The broadcast subscription plugin for Apache Pulsar 2.10: the plugin's typed configuration, the service it runs on
 * a broker (executor, scheduler), and the names clients use to select a broadcast subscription.
 *
 * <p>Sub-packages, in dependency order: {@code plugin} (the broker interceptor that a stock broker loads from the
 * NAR), {@code cnx} (the connection handler that routes broadcast commands), {@code dispatch} (the subscription, its
 * dispatcher and the dispatch core), {@code cursor} (the per-consumer virtual cursor), {@code client} (a helper for
 * Java clients, which needs only the client API).
 */
package io.github.pulsarbroadcast.broadcast;
