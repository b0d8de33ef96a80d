/**
 * The broadcast subscription plugin for Apache Pulsar 2.10: the plugin's typed configuration, the service it runs on
 * a broker (executor, scheduler), and the names clients use to select a broadcast subscription.
 *
 * <p>Sub-packages, in dependency order: {@code plugin} (the broker interceptor that a stock broker loads from the
 * NAR), {@code prometheus} (the metrics on the broker's {@code /metrics}), {@code cnx} (the connection handler that
 * routes broadcast commands), {@code dispatch} (the subscription, its dispatcher and the dispatch core),
 * {@code positions} (saved consumer positions), {@code cursor} (the per-consumer virtual cursor), {@code metrics} (the
 * instruments the dispatch path records into), {@code listing} (the consumer listing as plain data, JDK types only),
 * {@code client} (a helper for Java clients, which needs only the client API). {@code listing.http} (the listing's
 * servlet, loaded by the broker with a class loader of its own) depends on {@code listing} alone.
 */
package io.github.pulsarbroadcast.broadcast;
