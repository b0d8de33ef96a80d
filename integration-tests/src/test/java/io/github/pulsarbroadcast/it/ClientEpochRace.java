package io.github.pulsarbroadcast.it;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.config.Property;

/**
 * Watches the stock Java client's log for its consumer-epoch race (apache/pulsar#20032, open upstream): a consumer that
 * calls {@code redeliverUnacknowledgedMessages()} (a negative ack's timer does too) after it sent its subscribe but
 * before the broker answered raises its own epoch without telling the broker, which then stamps every message with the
 * older epoch; the client drops them all ("Consumer filter old epoch message") until its next redelivery request or
 * reconnect. The broker cannot know the client's epoch, so stock Failover stalls the same way. A test that plays random
 * schedules uses this to tell that stall (healed by one more redelivery request) from a loss.
 *
 * <p>Threading: the appender runs on whichever thread logs; the sets are concurrent.
 */
final class ClientEpochRace extends AbstractAppender implements AutoCloseable {

    private static final String CONSUMER_LOGGER = "org.apache.pulsar.client.impl.ConsumerImpl";
    private static final String BASE_LOGGER = "org.apache.pulsar.client.impl.ConsumerBase";

    /** "topic|consumerName" of consumers that asked for a redelivery while (re)connecting. */
    private final Set<String> redeliveredWhileConnecting = ConcurrentHashMap.newKeySet();
    /** Topics on which a client dropped a message stamped with an older epoch. */
    private final Set<String> filteredTopics = ConcurrentHashMap.newKeySet();

    private ClientEpochRace() {
        super("client-epoch-race", null, null, true, Property.EMPTY_ARRAY);
    }

    /** Starts watching the client's two loggers (both log at WARN, which the test configuration keeps). */
    static ClientEpochRace watch() {
        ClientEpochRace race = new ClientEpochRace();
        race.start();
        LoggerContext context = (LoggerContext) LogManager.getContext(false);
        Configuration config = context.getConfiguration();
        for (String name : new String[] {CONSUMER_LOGGER, BASE_LOGGER}) {
            LoggerConfig logger = config.getLoggerConfig(name);
            logger.addAppender(race, null, null);
        }
        context.updateLoggers();
        return race;
    }

    @Override
    public void append(LogEvent event) {
        String text = event.getMessage().getFormattedMessage();
        if (text.contains("Send redeliver messages command but the client is reconnect or close")) {
            String topic = between(text, "topic='", "'");
            String consumer = between(text, "consumerName='", "'");
            if (topic != null && consumer != null) {
                redeliveredWhileConnecting.add(topic + "|" + consumer);
            }
        } else if (text.contains("Consumer filter old epoch message")) {
            String topic = between(text, "topic : [", "]");
            if (topic != null) {
                filteredTopics.add(topic);
            }
        }
    }

    /** Whether {@code consumerName} on {@code topic} may be stalled by the race (both signs were logged). */
    boolean suspected(String topic, String consumerName) {
        return filteredTopics.contains(topic) && redeliveredWhileConnecting.contains(topic + "|" + consumerName);
    }

    private static String between(String text, String start, String end) {
        int from = text.indexOf(start);
        if (from < 0) {
            return null;
        }
        from += start.length();
        int to = text.indexOf(end, from);
        return to < 0 ? null : text.substring(from, to);
    }

    @Override
    public void close() {
        LoggerContext context = (LoggerContext) LogManager.getContext(false);
        Configuration config = context.getConfiguration();
        for (String name : new String[] {CONSUMER_LOGGER, BASE_LOGGER}) {
            config.getLoggerConfig(name).removeAppender(getName());
        }
        context.updateLoggers();
        stop();
    }
}
