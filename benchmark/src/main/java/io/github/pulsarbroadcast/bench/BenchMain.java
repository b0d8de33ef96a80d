package io.github.pulsarbroadcast.bench;

import picocli.CommandLine;

/**
 * Entry point of {@code bin/pulsar-broadcast bench}: sets up headless charts and the client log file, then runs
 * {@link BenchCommand}.
 *
 * <p>Threading: the main thread.
 */
public final class BenchMain {

    /** Held so that the level set below is not lost when the logger is garbage-collected. */
    private static final java.util.logging.Logger JERSEY = java.util.logging.Logger.getLogger("org.glassfish");

    private BenchMain() {
    }

    public static void main(String[] args) {
        System.exit(execute(args));
    }

    /** Runs the command and returns its exit code (the smoke test calls this). */
    public static int execute(String... args) {
        System.setProperty("java.awt.headless", "true");
        if (System.getProperty("log4j2.configurationFile") == null) {
            System.setProperty("log4j2.configurationFile", "bench-log4j2.xml");
        }
        // The admin client's Jersey logs start-up noise through java.util.logging.
        JERSEY.setLevel(java.util.logging.Level.SEVERE);
        CommandLine cli = new CommandLine(new BenchCommand("bin/pulsar-broadcast bench " + String.join(" ", args)));
        cli.getCommandSpec().usageMessage().footer(BenchCommand.presetHelp());
        return cli.execute(args);
    }
}
