package io.github.pulsarbroadcast.bench.proc;

import io.github.pulsarbroadcast.bench.fleet.FleetEngine;
import io.github.pulsarbroadcast.bench.fleet.FleetSpec;
import io.github.pulsarbroadcast.bench.floor.FloorServer;
import io.github.pulsarbroadcast.bench.floor.FloorSpec;
import java.util.concurrent.TimeUnit;

/**
 * Warms a new fleet or floor JVM up before it reports ready, so that neither its class loading nor its JIT
 * compilation lands in a run's figures (a fresh JVM spends tens of microseconds per delivery compiling during its
 * first minute, as much as the work measured at 1,000 deliveries per second): an in-process floor server and
 * {@value #CONSUMERS} simulated consumers on loopback exchange {@value #MESSAGES} messages through the same code the
 * run uses (connect, lookup, subscribe, MESSAGE frames, acknowledgements, flow permits, close), and everything is
 * thrown away. It has its own {@code Deliveries}; nothing of it reaches the run.
 *
 * <p>Threading: the calling thread waits; the engine and server use their own threads, all stopped on return.
 */
final class WarmUp {

    private static final int CONSUMERS = 20;
    private static final int MESSAGES = 10_000;
    private static final long LIMIT_SECONDS = 60;

    private WarmUp() {
    }

    /** Runs the warm-up with consumers of {@code mode} (the floor accepts any); gives up quietly after a minute. */
    static void run(String mode, int receiverQueue) throws InterruptedException {
        FloorSpec fs = new FloorSpec();
        fs.messageSize = 1024;
        fs.rate = 5_000;
        fs.totalMessages = MESSAGES;
        FloorServer server = new FloorServer(fs);
        FleetSpec spec = new FleetSpec();
        spec.serviceUrl = server.serviceUrl();
        spec.topic = "persistent://public/default/warm-up";
        spec.mode = mode;
        spec.subscriptions = CONSUMERS;
        spec.consumers = CONSUMERS;
        spec.totalConsumers = CONSUMERS;
        spec.consumersPerConnection = 4;
        spec.receiverQueue = receiverQueue;
        spec.totalMessages = MESSAGES;
        spec.statusIntervalMs = 1_000;
        FleetEngine engine = new FleetEngine(spec);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(LIMIT_SECONDS);
        try {
            engine.connectAll(System.nanoTime());
            while (engine.connectedCount() < CONSUMERS && System.nanoTime() < deadline) {
                TimeUnit.MILLISECONDS.sleep(20);
            }
            server.start();
            long expected = (long) CONSUMERS * MESSAGES;
            while (engine.deliveries().firstReceipts() < expected && System.nanoTime() < deadline) {
                TimeUnit.MILLISECONDS.sleep(20);
            }
        } finally {
            engine.close(5);
            server.close();
        }
    }
}
