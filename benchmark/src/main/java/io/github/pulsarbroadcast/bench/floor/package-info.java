/**
 * The floor server ({@link io.github.pulsarbroadcast.bench.floor.FloorServer}, run by {@code bench.proc.FloorMain}): a
 * trivial server in a JVM of its own
 * that speaks just enough of the Pulsar binary protocol (pulsar-common's {@code PulsarHandler} and {@code Commands})
 * for consumers to connect, subscribe and ask for messages, then writes the same MESSAGE frames a broker would, at the
 * same rate, to every consumer and reads their acknowledgements. No storage, no cursor, no dispatcher: what the
 * consumer fleet and this server cost together, and the latency they reach, are the machine's floor for the
 * workload.
 *
 * <p>Depends on nothing else of the benchmark.
 */
package io.github.pulsarbroadcast.bench.floor;
