package io.github.pulsarbroadcast.it;

import org.apache.pulsar.broker.ServiceConfiguration;

/**
 * {@link BroadcastAckTest}'s tests with {@code broadcastAcksOnEventLoop=false}: every ack command is applied on a
 * random executor thread (NTT's design) instead of the connection's event loop, the default.
 */
public class BroadcastAckOnExecutorTest extends BroadcastAckTest {

    @Override
    protected void configureBroker(ServiceConfiguration conf) {
        super.configureBroker(conf);
        conf.getProperties().setProperty("broadcastAcksOnEventLoop", "false");
    }
}
