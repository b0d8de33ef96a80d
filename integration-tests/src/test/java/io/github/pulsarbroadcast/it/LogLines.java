package io.github.pulsarbroadcast.it;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Property;

/**
 * Collects the log lines of one logger (and those below it) that contain a given text, while open: for tests that
 * check what the broker or a client said, such as how often a subscription was installed.
 *
 * <p>Threading: the appender runs on whichever thread logs; the list is concurrent.
 */
final class LogLines extends AbstractAppender implements AutoCloseable {

    private static final AtomicInteger WATCHES = new AtomicInteger();

    private final String loggerName;
    private final String text;
    private final List<String> lines = new CopyOnWriteArrayList<>();

    private LogLines(String loggerName, String text) {
        super("log-lines-" + WATCHES.incrementAndGet(), null, null, true, Property.EMPTY_ARRAY);
        this.loggerName = loggerName;
        this.text = text;
    }

    /** Starts collecting lines of {@code loggerName}'s configured logger that contain {@code text}. */
    static LogLines watch(String loggerName, String text) {
        LogLines watch = new LogLines(loggerName, text);
        watch.start();
        LoggerContext context = (LoggerContext) LogManager.getContext(false);
        context.getConfiguration().getLoggerConfig(loggerName).addAppender(watch, null, null);
        context.updateLoggers();
        return watch;
    }

    @Override
    public void append(LogEvent event) {
        String line = event.getMessage().getFormattedMessage();
        if (event.getLoggerName().startsWith(loggerName) && line.contains(text)) {
            lines.add(line);
        }
    }

    List<String> lines() {
        return List.copyOf(lines);
    }

    @Override
    public void close() {
        LoggerContext context = (LoggerContext) LogManager.getContext(false);
        context.getConfiguration().getLoggerConfig(loggerName).removeAppender(getName());
        context.updateLoggers();
        stop();
    }
}
