/**
 * Durable per-consumer positions: what a broadcast subscription writes so that every consumer resumes at its own
 * acknowledged position after a broker restart, crash or topic move ({@link
 * io.github.pulsarbroadcast.broadcast.positions.SavedPosition}, the compact {@link
 * io.github.pulsarbroadcast.broadcast.positions.SnapshotCodec}, and the {@link
 * io.github.pulsarbroadcast.broadcast.positions.PositionStore} in the broker's metadata store). Depends on nothing
 * else of the plugin; the dispatch package uses it.
 */
package io.github.pulsarbroadcast.broadcast.positions;
