/**
 * Tests of {@code bin/pulsar-broadcast cluster} (a Pulsar 2.10.5 cluster of separate processes on this machine) and
 * the chaos tests that kill, pause and restart its processes under a broadcast fleet: {@link
 * io.github.pulsarbroadcast.cluster.ClusterCommand} drives the command, {@link io.github.pulsarbroadcast.cluster.Fleet}
 * and {@link io.github.pulsarbroadcast.cluster.Publisher} are the clients, {@link
 * io.github.pulsarbroadcast.cluster.FaultFigures} turns what the consumers recorded into the figures of a fault.
 *
 * <p>TestNG groups: {@code unit} (the command's arguments, no process started; in the default build), {@code cluster}
 * (the command starts a real cluster) and {@code chaos} (the fault tests); the last two run with {@code -Pchaos}.
 */
package io.github.pulsarbroadcast.cluster;
