package io.github.pulsarbroadcast.bench.proc;

import io.github.pulsarbroadcast.bench.fleet.FleetEngine;
import io.github.pulsarbroadcast.bench.fleet.FleetSpec;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Entry point of a fleet process ({@code FleetMain <spec.json>}), started by the benchmark JVM. It first warms its JIT
 * up ({@link WarmUp}), then prints {@code ready} and reads commands,
 * one a line, on standard input and answers on standard output, where it also prints its counters every
 * {@code statusIntervalMs} ({@code status connected failed firstReceipts allReceipts lastReceiptNanos catchingUp
 * liveP99Ms reconnects entryErrors active
 * subscribes}):
 * <ul>
 *   <li>{@code connect <startNanos>}: subscribe every consumer; connect times count from {@code startNanos}
 *       ({@link System#nanoTime} of the benchmark JVM: the same monotonic clock on one machine);</li>
 *   <li>{@code window <w>}: the backlog experiment's latency window; {@code pause}; {@code resume <targetSeq>};</li>
 *   <li>{@code collect <file>}: write the state there, answer {@code collected};</li>
 *   <li>{@code close <seconds>}: close every consumer and connection, answer {@code closed <unconfirmed>};</li>
 *   <li>{@code exit}, or the end of standard input (the benchmark JVM is gone): exit.</li>
 * </ul>
 * Errors go to standard output as {@code error <text>} (the first of each kind once) and to the log on standard error.
 *
 * <p>Threading: the main thread reads commands and runs them; one daemon thread prints the status lines;
 * {@link #out} is a {@link PrintStream}, whose methods synchronize.
 */
public final class FleetMain {

    private final FleetEngine engine;
    private final PrintStream out;
    private String reportedError;

    private FleetMain(FleetEngine engine, PrintStream out) {
        this.engine = engine;
        this.out = out;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: FleetMain <spec.json>");
            System.exit(2);
        }
        FleetSpec spec = FleetSpec.read(Path.of(args[0]));
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        WarmUp.run(spec.mode, spec.receiverQueue);
        FleetMain main = new FleetMain(new FleetEngine(spec), out);
        out.println("ready");
        System.exit(main.run(spec.statusIntervalMs));
    }

    private int run(int statusIntervalMs) throws IOException, InterruptedException {
        ScheduledExecutorService status = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "fleet-status");
            t.setDaemon(true);
            return t;
        });
        status.scheduleAtFixedRate(this::report, statusIntervalMs, statusIntervalMs, TimeUnit.MILLISECONDS);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (!execute(line.trim())) {
                    break;
                }
            }
        } finally {
            status.shutdownNow();
        }
        engine.close(5);
        return 0;
    }

    /** Runs one command; false to exit. */
    private boolean execute(String line) throws IOException, InterruptedException {
        String[] words = line.split(" ", 2);
        String arg = words.length > 1 ? words[1] : "";
        switch (words[0]) {
            case "connect":
                engine.connectAll(Long.parseLong(arg));
                return true;
            case "window":
                engine.deliveries().latency().window(Integer.parseInt(arg));
                return true;
            case "pause":
                engine.pause();
                return true;
            case "resume":
                engine.resume(Integer.parseInt(arg));
                return true;
            case "collect":
                report();
                engine.writeState(Path.of(arg));
                out.println("collected");
                return true;
            case "close":
                int unconfirmed = engine.close(Long.parseLong(arg));
                report();
                out.println("closed " + unconfirmed);
                return true;
            case "exit":
                return false;
            default:
                out.println("error unknown command: " + line);
                return true;
        }
    }

    private void report() {
        String error = engine.firstError();
        if (error != null && !error.equals(reportedError)) {
            reportedError = error;
            out.println("error " + error.replace('\n', ' '));
        }
        out.println(engine.status());
    }
}
