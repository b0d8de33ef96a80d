/**
 * The stock admin API's subscription operations (reset-cursor, skip, clear-backlog, expire, update-properties) on a
 * broadcast subscription this broker holds but does not serve yet (the topic was loaded and no broadcast consumer is
 * back): the subscription is served as broadcast before the stock handler runs, so the operation reaches every
 * consumer's position, not the managed cursor alone. Depends on {@code dispatch} and the root package; only
 * {@code plugin} depends on it.
 */
package io.github.pulsarbroadcast.broadcast.admin;
