/**
 * The connection handler: a {@link org.apache.pulsar.broker.service.ServerCnx} subclass installed through
 * {@link org.apache.pulsar.broker.service.BrokerService#setPulsarChannelInitializerFactory}. Commands for broadcast
 * consumers go to the plugin; everything else goes to stock Pulsar unchanged.
 */
package io.github.pulsarbroadcast.broadcast.cnx;
