/**
 * The consumer listing over HTTP on the broker's web port: a stock Pulsar additional servlet
 * ({@code additionalServlets=broadcast-consumers}), declared in the plugin's NAR beside the broker interceptor.
 * The broker loads it with a class loader of its own, so it never names the plugin's dispatch classes: it finds the
 * topic and subscription through stock types, applies the broker's authorization (topic operation GET_STATS, as topic
 * stats do) and ownership (a 307 redirect to the owner, as the admin API does), and calls the subscription as a
 * {@link java.util.function.Function} of JDK types.
 */
package io.github.pulsarbroadcast.broadcast.listing.http;
