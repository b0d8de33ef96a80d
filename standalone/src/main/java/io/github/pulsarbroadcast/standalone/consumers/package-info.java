/**
 * {@code pulsar-broadcast consumers}: the consumer listing of a broadcast subscription from the command line, over
 * the broker's HTTP listing (the plugin's additional servlet), as a table or as JSON.
 */
package io.github.pulsarbroadcast.standalone.consumers;
