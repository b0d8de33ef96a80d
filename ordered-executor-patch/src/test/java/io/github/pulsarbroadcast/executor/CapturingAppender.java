package io.github.pulsarbroadcast.executor;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.config.Property;

/**
 * Captures what one logger writes, so that tests can check that failures are logged. Attached to the root logger
 * config (next to the console appender, which keeps working). Thread-safe.
 */
final class CapturingAppender extends AbstractAppender implements AutoCloseable {

    /** Appended to by logging threads; copy-on-write, so readers need no lock. */
    private final List<LogEvent> events = new CopyOnWriteArrayList<>();
    private final String loggerName;
    private final LoggerContext context;

    private CapturingAppender(Class<?> loggerClass) {
        super("capture-" + loggerClass.getSimpleName(), null, null, true, Property.EMPTY_ARRAY);
        this.loggerName = loggerClass.getName();
        this.context = (LoggerContext) LogManager.getContext(false);
    }

    static CapturingAppender attachTo(Class<?> loggerClass) {
        CapturingAppender appender = new CapturingAppender(loggerClass);
        appender.start();
        appender.rootConfig().addAppender(appender, null, null);
        appender.context.updateLoggers();
        return appender;
    }

    @Override
    public void append(LogEvent event) {
        if (loggerName.equals(event.getLoggerName())) {
            events.add(event.toImmutable());
        }
    }

    List<LogEvent> events() {
        return events;
    }

    @Override
    public void close() {
        rootConfig().removeAppender(getName());
        context.updateLoggers();
        stop();
    }

    private LoggerConfig rootConfig() {
        return context.getConfiguration().getRootLogger();
    }
}
