package io.github.pulsarbroadcast.bench.proc;

import io.github.pulsarbroadcast.bench.floor.FloorServer;
import io.github.pulsarbroadcast.bench.floor.FloorSpec;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Entry point of the floor server's JVM ({@code FloorMain <spec.json>}), started by the benchmark JVM for the floor
 * mode. It warms its JIT up first ({@link WarmUp}), then prints {@code service URL: pulsar://127.0.0.1:<port>} once
 * it listens, then a status line every {@code statusIntervalMs} ({@link FloorServer#status}), and {@code done} once
 * the last message is out. Commands on standard input: {@code start} (answered {@code started <startNanos>}),
 * {@code stop}, and {@code exit} or the end of standard input.
 *
 * <p>Threading: the main thread reads commands; one daemon thread prints the status; {@link PrintStream} methods
 * synchronize.
 */
public final class FloorMain {

    private FloorMain() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: FloorMain <spec.json>");
            System.exit(2);
        }
        FloorSpec spec = FloorSpec.read(Path.of(args[0]));
        WarmUp.run("floor", 10);
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        FloorServer server = new FloorServer(spec);
        out.println("service URL: " + server.serviceUrl());
        ScheduledExecutorService status = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "floor-status");
            t.setDaemon(true);
            return t;
        });
        boolean[] doneSent = {false};
        status.scheduleAtFixedRate(() -> {
            out.println(server.status());
            if (server.done() && !doneSent[0]) {
                doneSent[0] = true;
                out.println("done");
            }
        }, spec.statusIntervalMs, spec.statusIntervalMs, TimeUnit.MILLISECONDS);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null && !line.trim().equals("exit"); line = in.readLine()) {
            if (line.trim().equals("start")) {
                out.println("started " + server.start());
            } else if (line.trim().equals("stop")) {
                server.stop();
            }
        }
        status.shutdownNow();
        server.close();
        System.exit(0);
    }
}
