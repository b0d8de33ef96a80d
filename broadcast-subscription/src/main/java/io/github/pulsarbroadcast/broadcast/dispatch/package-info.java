/**
 * The broadcast subscription and its dispatcher: one managed cursor and one dispatcher per subscription, each entry
 * read from storage once and sent to every consumer, sends grouped by connection.
 */
package io.github.pulsarbroadcast.broadcast.dispatch;
