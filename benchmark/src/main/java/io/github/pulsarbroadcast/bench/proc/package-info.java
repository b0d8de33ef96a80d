/**
 * The entry points of the helper JVMs the benchmark starts: {@link io.github.pulsarbroadcast.bench.proc.FleetMain}
 * (a fleet process) and {@link io.github.pulsarbroadcast.bench.proc.FloorMain} (the floor server), each driven
 * through its standard input and output, and the {@link io.github.pulsarbroadcast.bench.proc.WarmUp} both run
 * before they report ready.
 *
 * <p>Depends on {@code bench.fleet}, {@code bench.floor} and {@code bench.core}; only the {@code bench} package
 * depends on it (by class name, to start the JVMs).
 */
package io.github.pulsarbroadcast.bench.proc;
