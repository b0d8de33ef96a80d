package io.github.pulsarbroadcast.it;

/**
 * Watches the stock Java client's log for its consumer-epoch race (apache/pulsar#20032, open upstream): a consumer that
 * calls {@code redeliverUnacknowledgedMessages()} (a negative ack's timer does too) after it sent its subscribe but
 * before the broker answered raises its own epoch without telling the broker, which then stamps every message with the
 * older epoch; the client drops them all ("Consumer filter old epoch message") until its next redelivery request or
 * reconnect. The broker cannot know the client's epoch, so stock Failover stalls the same way. A test that plays random
 * schedules uses this to tell that stall (healed by one more redelivery request) from a loss. Its limit: a broker that
 * stamped a wrong epoch on a consumer that also raced would be healed the same way and not caught.
 *
 * <p>Threading: the two {@link LogLines} collect on whichever thread logs; {@link #suspected} reads their snapshots.
 */
final class ClientEpochRace implements AutoCloseable {

    private static final String CLIENT = "org.apache.pulsar.client.impl";

    /** "... consumerName='car-a', topic='persistent://...'} Send redeliver messages command but ..." */
    private final LogLines redeliveredWhileConnecting =
            LogLines.watch(CLIENT, "Send redeliver messages command but the client is reconnect or close");
    /** "Consumer filter old epoch message, topic : [persistent://...], ..." */
    private final LogLines filtered = LogLines.watch(CLIENT, "Consumer filter old epoch message");

    private ClientEpochRace() {
    }

    /** Starts watching the client's log (both lines are logged at WARN, which the test configuration keeps). */
    static ClientEpochRace watch() {
        return new ClientEpochRace();
    }

    /** Whether {@code consumerName} on {@code topic} may be stalled by the race (both signs were logged). */
    boolean suspected(String topic, String consumerName) {
        boolean raced = redeliveredWhileConnecting.lines().stream()
                .anyMatch(l -> l.contains("consumerName='" + consumerName + "'")
                        && l.contains("topic='" + topic + "'"));
        return raced && filtered.lines().stream().anyMatch(l -> l.contains("topic : [" + topic + "]"));
    }

    @Override
    public void close() {
        redeliveredWhileConnecting.close();
        filtered.close();
    }
}
