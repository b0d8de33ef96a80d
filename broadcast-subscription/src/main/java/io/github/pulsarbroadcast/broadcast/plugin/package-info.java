/**
 * The plugin's entry point: the broker interceptor that a stock broker loads from the NAR and that installs the
 * connection handler. It depends on every other package of the plugin and nothing depends on it, which keeps the
 * package dependencies one-way: {@code plugin} to {@code cnx} and {@code admin}, each of them to {@code dispatch},
 * to {@code cursor}, each of them to the root package (configuration, the plugin service, the client-facing names),
 * and the root to {@code client}.
 */
package io.github.pulsarbroadcast.broadcast.plugin;
