package io.github.pulsarbroadcast.standalone;

import io.github.pulsarbroadcast.standalone.consumers.ConsumersCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code pulsar-broadcast}: the command line. Sub-commands: {@code standalone}, {@code consumers}.
 *
 * <p>Threading: runs on the main thread.
 */
@Command(name = "pulsar-broadcast", mixinStandardHelpOptions = true, versionProvider = BuildVersion.class,
        subcommands = {StandaloneCommand.class, ConsumersCommand.class, CommandLine.HelpCommand.class},
        description = "Broadcast subscriptions for Apache Pulsar 2.10: run an embedded broker with the plugin, list a"
                + " broadcast subscription's consumers.")
public final class Main implements Runnable {

    /** Held so that the level set below is not lost when the logger is garbage-collected. */
    private static final java.util.logging.Logger JERSEY = java.util.logging.Logger.getLogger("org.glassfish");

    public static void main(String[] args) {
        // Jersey logs start-up noise through java.util.logging; the broker's own logging is log4j2.
        JERSEY.setLevel(java.util.logging.Level.SEVERE);
        System.exit(new CommandLine(new Main()).execute(args));
    }

    @Override
    public void run() {
        new CommandLine(this).usage(System.out);
    }
}
