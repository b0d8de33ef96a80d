/**
 * The consumer fleet: simulated Pulsar consumers ({@link io.github.pulsarbroadcast.bench.fleet.FleetEngine}, run in a
 * JVM of its own by {@code bench.proc.FleetMain}), speaking the binary protocol over Netty with pulsar-common's
 * own protocol code (encoding by {@code Commands}, frames and commands parsed by {@code PulsarDecoder}, message
 * metadata by {@code Commands.parseMessageMetadata}). Each behaves like a stock consumer: lookup, CONNECT once per
 * connection, SUBSCRIBE with the mode's type and properties and a unique name, FLOW refilled at half the receiver
 * queue, every message acknowledged, and a reconnect with the same name after a close. What they receive is
 * accounted in the same {@code core} objects as the stock client's ({@link
 * io.github.pulsarbroadcast.bench.core.Deliveries}), shipped to the benchmark JVM as a {@link
 * io.github.pulsarbroadcast.bench.fleet.FleetState}.
 *
 * <p>Depends on {@code bench.core} only; {@code bench.proc} runs it, the {@code bench} package drives the processes.
 */
package io.github.pulsarbroadcast.bench.fleet;
