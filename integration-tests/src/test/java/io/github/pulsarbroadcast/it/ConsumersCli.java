package io.github.pulsarbroadcast.it;

import io.github.pulsarbroadcast.standalone.consumers.ConsumersCommand;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;

/**
 * One run of {@code pulsar-broadcast consumers} (the consumer listing's command line) in this JVM: its exit code and
 * what it printed.
 *
 * <p>Threading: immutable once run; {@link #run} runs on the caller's thread.
 */
final class ConsumersCli {

    final int exit;
    final String out;
    final String err;

    private ConsumersCli(int exit, String out, String err) {
        this.exit = exit;
        this.out = out;
        this.err = err;
    }

    /** Runs the command with {@code common} and then {@code more} as its arguments, with no environment variable. */
    static ConsumersCli run(String[] common, String... more) {
        return run(Map.of(), common, more);
    }

    /** As {@link #run(String[], String...)}, the command seeing {@code environment} as its environment variables. */
    static ConsumersCli run(Map<String, String> environment, String[] common, String... more) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        List<String> args = new ArrayList<>(List.of(common));
        args.addAll(List.of(more));
        PrintStream errStream = new PrintStream(err, true, StandardCharsets.UTF_8);
        CommandLine cli = new CommandLine(new ConsumersCommand(new PrintStream(out, true, StandardCharsets.UTF_8),
                errStream, environment::get));
        cli.setErr(new PrintWriter(errStream, true)); // picocli's own messages (bad options), as on a terminal
        int exit = cli.execute(args.toArray(new String[0]));
        return new ConsumersCli(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }
}
