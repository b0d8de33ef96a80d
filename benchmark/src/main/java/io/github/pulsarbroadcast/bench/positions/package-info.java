/**
 * The cost of saving and restoring broadcast consumer positions (issue 13): bytes per consumer, the CPU of one full
 * save and of restoring every position when a topic loads, and the metadata-store round trips.
 */
package io.github.pulsarbroadcast.bench.positions;
