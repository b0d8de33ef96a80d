package io.github.pulsarbroadcast.bench;

import io.github.pulsarbroadcast.bench.core.Deliveries;
import io.github.pulsarbroadcast.bench.core.Mode;
import io.github.pulsarbroadcast.bench.fleet.FleetSpec;
import io.github.pulsarbroadcast.bench.fleet.FleetState;
import io.github.pulsarbroadcast.bench.proc.FleetMain;
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.ToLongFunction;

/**
 * The consumers of one run as the consumer fleet ({@code --client fleet}): one or more fleet JVMs
 * ({@link ChildJvm}s running {@link FleetMain}) laid out by {@link FleetLayout}, each simulating a contiguous range
 * of the consumers. Their
 * counters arrive as status lines; {@link #collect} brings their trackers, histograms and fan-out into this JVM's
 * {@link Deliveries}, from which the report is made exactly as for the stock client.
 *
 * <p>Threading: the main thread only (each {@link ChildJvm} has its own output reader thread).
 */
final class FleetProcesses implements ConsumerSide {

    /** Fields of a fleet status line (see {@code FleetMain}). */
    private static final int CONNECTED = 0;
    private static final int FAILED = 1;
    private static final int FIRST_RECEIPTS = 2;
    private static final int LAST_RECEIPT = 4;
    private static final int CATCHING_UP = 5;
    private static final int LIVE_P99 = 6;
    private static final int ACTIVE = 9;
    private static final int SUBSCRIBES = 10;

    private final BenchSettings s;
    private final Deliveries deliveries;
    private final Path dir;
    private final String label;
    private final FleetLayout layout;
    private final List<ChildJvm> processes = new ArrayList<>();
    private int collects;

    FleetProcesses(BenchSettings s, Deliveries deliveries, Path dir, String label) {
        this.s = s;
        this.deliveries = deliveries;
        this.dir = dir;
        this.label = label;
        this.layout = FleetLayout.of(s, deliveries.trackers().length);
    }

    FleetLayout layout() {
        return layout;
    }

    /** Starts the fleet JVMs for {@code mode} on {@code topic} and waits until each is ready. */
    void start(Mode mode, String topic, int subscriptions, String serviceUrl, int totalMessages)
            throws IOException, InterruptedException {
        Files.createDirectories(dir);
        int k = 0;
        for (FleetLayout.Part part : layout.parts) {
            FleetSpec spec = spec(mode, topic, subscriptions, serviceUrl, totalMessages, part);
            String name = label + "-p" + k++;
            Path specFile = dir.resolve(name + ".json");
            spec.write(specFile);
            processes.add(ChildJvm.start(s.fleetJavaOpts, FleetMain.class.getName(), List.of(specFile.toString()),
                    dir.resolve(name + ".log")));
        }
        for (ChildJvm p : processes) {
            if (p.await("ready", 120) == null) {
                throw new IOException("a fleet process did not start: fleet " + p.deathReason());
            }
        }
    }

    private FleetSpec spec(Mode mode, String topic, int subscriptions, String serviceUrl, int totalMessages,
            FleetLayout.Part part) {
        FleetSpec f = new FleetSpec();
        f.serviceUrl = serviceUrl;
        f.topic = topic;
        f.mode = mode.cliName();
        f.subscriptions = subscriptions;
        f.firstConsumer = part.firstConsumer;
        f.consumers = part.consumers;
        f.totalConsumers = layout.consumers;
        f.consumersPerConnection = layout.perConnection;
        f.firstConnection = part.firstConnection;
        f.connectionsPerSourceAddress = layout.perAddress;
        f.receiverQueue = s.receiverQueue;
        f.ackCumulative = s.ackCumulative;
        f.flushEveryAck = s.flushEveryAck;
        f.lookup = s.lookup;
        f.connectRate = s.connectRate / layout.processes;
        f.connectConcurrency = Math.max(1, s.connectConcurrency / layout.processes);
        f.measuredFromSeq = s.warmupMessages();
        f.periodNanos = s.periodNanos();
        f.totalMessages = totalMessages;
        f.pauseFraction = mode.canPause() ? s.pauseFraction : 0;
        f.ioThreads = s.fleetThreads;
        return f;
    }

    @Override
    public Outcome connect(BooleanSupplier healthy, Runnable tick) throws InterruptedException {
        long start = System.nanoTime();
        long deadline = start + TimeUnit.SECONDS.toNanos(s.connectTimeoutSeconds);
        int n = layout.consumers;
        Outcome out = new Outcome();
        sendAll("connect " + start);
        while (sum(p -> p.status(CONNECTED)) + sum(p -> p.status(FAILED)) < n) {
            tick.run();
            if (!healthy.getAsBoolean() || trouble() != null || System.nanoTime() > deadline) {
                out.timedOut = true;
                break;
            }
            Thread.sleep(100);
        }
        tick.run();
        out.connected = (int) sum(p -> p.status(CONNECTED));
        out.failed = (int) sum(p -> p.status(FAILED));
        out.elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        for (ChildJvm p : processes) {
            if (out.firstError == null) {
                out.firstError = p.error();
            }
        }
        if (trouble() != null) {
            out.firstError = trouble();
        }
        return out;
    }

    private void sendAll(String command) {
        for (ChildJvm p : processes) {
            try {
                p.send(command);
            } catch (IOException e) {
                // the process is gone; trouble() reports it
            }
        }
    }

    private long sum(ToLongFunction<ChildJvm> f) {
        long total = 0;
        for (ChildJvm p : processes) {
            total += f.applyAsLong(p);
        }
        return total;
    }

    private long max(ToLongFunction<ChildJvm> f) {
        long m = Long.MIN_VALUE;
        for (ChildJvm p : processes) {
            m = Math.max(m, f.applyAsLong(p));
        }
        return m;
    }

    @Override
    public int connected() {
        return (int) sum(p -> p.status(CONNECTED));
    }

    @Override
    public long firstReceipts() {
        return sum(p -> p.status(FIRST_RECEIPTS));
    }

    @Override
    public long lastReceiptNanos() {
        return max(p -> p.status(LAST_RECEIPT));
    }

    @Override
    public int catchingUp() {
        return (int) sum(p -> p.status(CATCHING_UP));
    }

    @Override
    public long liveP99() {
        return max(p -> p.status(LIVE_P99));
    }

    @Override
    public int active() {
        return (int) sum(p -> p.status(ACTIVE));
    }

    @Override
    public long subscribes() {
        return sum(p -> p.status(SUBSCRIBES));
    }

    @Override
    public void window(int window) {
        deliveries.latency().window(window);
        sendAll("window " + window);
    }

    @Override
    public void pause(List<Integer> indexes) {
        sendAll("pause");
    }

    @Override
    public void resume(List<Integer> indexes, int targetSeq) {
        sendAll("resume " + targetSeq);
    }

    @Override
    public FleetState collect() throws IOException, InterruptedException {
        List<Path> files = new ArrayList<>();
        int round = collects++;
        for (int k = 0; k < processes.size(); k++) {
            Path file = dir.resolve(label + "-p" + k + ".state");
            processes.get(k).send("collect " + file);
            files.add(file);
        }
        for (ChildJvm p : processes) {
            if (p.await("collected", 300) == null) {
                throw new IOException("collecting the fleet's figures failed (round " + round + "): "
                        + (p.alive() ? "no answer in 300 s" : p.deathReason()));
            }
        }
        deliveries.resetMerged();
        FleetState total = new FleetState();
        for (Path file : files) {
            try (DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(file),
                    1 << 16))) {
                FleetState one = FleetState.read(in, deliveries);
                total.reconnects += one.reconnects;
                total.entryErrors += one.entryErrors;
                total.connectionsOpened += one.connectionsOpened;
                total.firstError = total.firstError != null ? total.firstError : one.firstError;
            }
            Files.deleteIfExists(file);
        }
        return total;
    }

    @Override
    public void close(long seconds) {
        sendAll("close " + seconds);
        try {
            for (ChildJvm p : processes) {
                p.await("closed", seconds + 30);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        processes.forEach(p -> p.stop(30));
    }

    @Override
    public void abandon() {
        processes.forEach(ChildJvm::kill);
    }

    @Override
    public List<Long> pids() {
        List<Long> pids = new ArrayList<>();
        processes.forEach(p -> pids.add(p.pid()));
        return pids;
    }

    @Override
    public String trouble() {
        for (ChildJvm p : processes) {
            if (!p.alive()) {
                return "fleet " + p.deathReason();
            }
        }
        return null;
    }
}
