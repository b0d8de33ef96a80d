/**
 * A helper for Java clients: subscribe to a broadcast subscription with the stock Pulsar client API. Depends only
 * on {@code pulsar-client-api}.
 */
package io.github.pulsarbroadcast.broadcast.client;
