/**
 * The consumer listing of one broadcast subscription, as plain data: the query ({@link
 * io.github.pulsarbroadcast.broadcast.listing.ListingQuery}: sort, order, state filter, offset, limit), one row per
 * consumer ({@link io.github.pulsarbroadcast.broadcast.listing.ConsumerRow}) and the page answered
 * ({@link io.github.pulsarbroadcast.broadcast.listing.ConsumerListing}). It depends on the JDK only, so that the
 * dispatcher (which fills the rows) and the HTTP servlet (loaded by a class loader of its own) can both use it and
 * exchange nothing but JDK types.
 */
package io.github.pulsarbroadcast.broadcast.listing;
