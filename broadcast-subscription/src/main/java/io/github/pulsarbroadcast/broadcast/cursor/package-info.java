/**
 * Virtual cursors: the few bytes a broadcast subscription keeps per consumer (what it was sent, what it has
 * acknowledged) instead of a managed cursor per consumer.
 */
package io.github.pulsarbroadcast.broadcast.cursor;
