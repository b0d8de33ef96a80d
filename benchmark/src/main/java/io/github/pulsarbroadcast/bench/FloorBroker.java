package io.github.pulsarbroadcast.bench;

import io.github.pulsarbroadcast.bench.core.Percentiles;
import io.github.pulsarbroadcast.bench.floor.FloorSpec;
import io.github.pulsarbroadcast.bench.proc.FloorMain;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The floor mode's "broker": the floor server ({@link FloorMain}) in a JVM of its own, on a loopback port, with no
 * admin interface. It is also the run's {@link MessageSource}: the server publishes on its own schedule, and its
 * counters arrive as status lines (see {@code FloorServer.status}).
 *
 * <p>Threading: the main thread starts, drives and closes it ({@link ChildJvm} reads the server's output on a
 * thread of its own); {@link #startNanos} and {@link #stopped} are only touched by the main thread.
 */
final class FloorBroker implements Broker, MessageSource {

    private static final int PUBLISHED = 0;
    private static final int LAST_SEND = 1;
    private static final int FIRST_MEASURED = 2;
    private static final int LAG_MAX = 3;

    private final ChildJvm jvm;
    private final String serviceUrl;
    private final FloorSpec spec;
    private final long periodNanos;
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    private long startNanos;
    private boolean stopped;

    private FloorBroker(ChildJvm jvm, String serviceUrl, FloorSpec spec) {
        this.jvm = jvm;
        this.serviceUrl = serviceUrl;
        this.spec = spec;
        this.periodNanos = Math.max(1, Math.round(1e9 / spec.rate));
    }

    /** Starts a floor server for the workload of {@code s} ({@code index} numbers its log file). */
    static FloorBroker start(BenchSettings s, int index) throws IOException, InterruptedException {
        FloorSpec spec = new FloorSpec();
        spec.messageSize = s.messageSize;
        spec.rate = s.rate;
        spec.totalMessages = s.totalMessages();
        spec.warmupMessages = s.warmupMessages();
        spec.ioThreads = Runtime.getRuntime().availableProcessors();
        Path dir = Files.createDirectories(s.out.resolve("floor"));
        Path specFile = dir.resolve("floor-" + index + ".json");
        spec.write(specFile);
        ChildJvm jvm = ChildJvm.start(s.fleetJavaOpts, FloorMain.class.getName(), List.of(specFile.toString()),
                dir.resolve("floor-" + index + ".log"));
        String line = jvm.await("service URL:", 60);
        if (line == null) {
            jvm.kill();
            throw new IOException("the floor server did not start: " + jvm.deathReason());
        }
        return new FloorBroker(jvm, line.substring("service URL:".length()).trim(), spec);
    }

    /** This server as the run's message source. */
    MessageSource source() {
        return this;
    }

    @Override
    public String serviceUrl() {
        return serviceUrl;
    }

    @Override
    public String adminUrl() {
        return null;
    }

    @Override
    public Long pid() {
        return jvm.pid();
    }

    @Override
    public boolean alive() {
        return jvm.alive();
    }

    @Override
    public String deathReason() {
        return "the floor server's " + jvm.deathReason();
    }

    @Override
    public String memoryTrouble() {
        return null;
    }

    @Override
    public void start() {
        try {
            jvm.send("start");
            String started = jvm.await("started", 30);
            startNanos = started == null ? System.nanoTime() : Long.parseLong(started.substring(8).trim());
        } catch (IOException e) {
            startNanos = System.nanoTime(); // alive() will fail the run
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public long startNanos() {
        return startNanos;
    }

    @Override
    public long intendedNanos(int seq) {
        return startNanos + seq * periodNanos;
    }

    @Override
    public CompletableFuture<Void> done() {
        if (stopped || sent() >= spec.totalMessages || !jvm.alive()) {
            done.complete(null);
        }
        return done;
    }

    @Override
    public int sent() {
        return (int) jvm.status(PUBLISHED);
    }

    @Override
    public long lastSendNanos() {
        return jvm.status(LAST_SEND);
    }

    @Override
    public long firstMeasuredSendNanos() {
        return jvm.status(FIRST_MEASURED);
    }

    @Override
    public int failed() {
        return 0;
    }

    @Override
    public String firstError() {
        return null;
    }

    @Override
    public BitSet acked() {
        BitSet all = new BitSet();
        all.set(0, sent());
        return all;
    }

    @Override
    public void stop() {
        stopped = true;
        try {
            jvm.send("stop");
        } catch (IOException e) {
            // gone already
        }
    }

    /** The floor server reports only its largest send lag: every percentile here is that upper bound. */
    @Override
    public Percentiles sendLag() {
        Percentiles p = new Percentiles();
        p.count = sent();
        long max = jvm.status(LAG_MAX);
        p.p50 = max;
        p.p95 = max;
        p.p99 = max;
        p.p999 = max;
        p.max = max;
        p.mean = max;
        return p;
    }

    @Override
    public int rejected() {
        return 0;
    }

    /** Ends the run's use of the source; the server itself stops with {@link #close}. */
    @Override
    public void close() {
        jvm.stop(10);
    }
}
