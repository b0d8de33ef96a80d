package io.github.pulsarbroadcast.bench;

import io.github.pulsarbroadcast.bench.core.ConsumerTracker;
import io.github.pulsarbroadcast.bench.core.Deliveries;
import io.github.pulsarbroadcast.bench.core.LatencyRecorder;
import io.github.pulsarbroadcast.bench.core.Mode;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.admin.PulsarAdminException;
import org.apache.pulsar.client.api.Producer;

/**
 * One mode at one N, on a fresh topic: measure the idle baseline, connect the N consumers (stock Java client or
 * fleet), measure the connected baseline, publish the warm-up and the measured messages on schedule (pausing and
 * resuming the backlog group when planned), stop the producer, drain, snapshot (and once more after a grace period
 * when deliveries were missing, to tell late from lost), then collect the figures and close everything. It never
 * throws: whatever stops it (connect time-out, failed subscribes, the broker or a fleet process dying, this JVM
 * running out of memory) becomes the result's {@code failed} status and reason.
 *
 * <p>Threading: {@link #run} runs on the main thread, which also polls the counters that the clients' threads (or
 * processes) update (see {@link ConsumerSide}, {@link MessageSource}).
 */
final class ModeRun {

    /** Thrown inside the run when the broker or a fleet process exits or this JVM runs out of heap. */
    private static final class Unhealthy extends Exception {
        private static final long serialVersionUID = 1L;

        Unhealthy(String message) {
            super(message);
        }
    }

    private final BenchSettings s;
    private final Mode mode;
    private final int n;
    private final Broker broker;
    private final PulsarAdmin admin;
    private final boolean freshBroker;
    private final String topic;
    private final String label;
    private final String runId;
    private final ConsumerTracker[] trackers;
    private final Deliveries deliveries;
    private final ModeResult result;
    private ConsumerSide side;
    private RunMeter meter;
    private RunMetrics metrics;
    /** The topic move, when one is planned; main thread. */
    private TopicMove move;
    private String phase = "starting";
    private long phaseStartNanos = System.nanoTime();

    ModeRun(BenchSettings s, Mode mode, int n, Broker broker, PulsarAdmin admin, boolean freshBroker, String runId) {
        this.s = s;
        this.mode = mode;
        this.n = n;
        this.broker = broker;
        this.admin = admin;
        this.freshBroker = freshBroker;
        this.runId = runId;
        int subscriptions = mode.subscriptions(n, s.splitSubscriptions);
        this.topic = (mode.persistent() ? "persistent://" : "non-persistent://") + s.namespace + "/bench-" + runId
                + "-" + mode.cliName() + "-" + n;
        this.label = String.format("%s N=%,d", mode, n);
        this.trackers = new ConsumerTracker[n];
        boolean pausing = mode.canPause() && s.pauseFraction > 0;
        for (int i = 0; i < n; i++) {
            trackers[i] = new ConsumerTracker(i, mode.subscription(i, subscriptions),
                    pausing && ConsumerTracker.inPauseGroup(i, s.pauseFraction));
        }
        this.deliveries = new Deliveries(trackers, s.warmupMessages(), s.totalMessages(), s.periodNanos());
        this.result = new ModeResult(mode, n, subscriptions);
        result.topic = topic;
        result.clientKind = s.client;
    }

    ConsumerTracker[] trackers() {
        return trackers;
    }

    /** The broker's metrics sampled during the run, or null (not a broadcast run, or sampling off). */
    io.github.pulsarbroadcast.bench.metrics.MetricsSeries metrics() {
        return metrics == null ? null : metrics.series();
    }

    ModeResult run() {
        long started = System.nanoTime();
        meter = new RunMeter(broker.pid(), freshBroker, !s.fleet());
        ClientPool clients = null;
        MessageSource source = null;
        long[] window = new long[2];
        try {
            createTopic();
            metrics = RunMetrics.start(s, mode, broker, topic, label);
            enter("idle baseline");
            meter.idleBaseline(s.baselineSeconds);
            enter("starting clients");
            boolean producer = mode != Mode.FLOOR;
            clients = !producer && s.fleet() ? null : new ClientPool(broker.serviceUrl(), s.fleet() ? 0 : n, s);
            result.clients = clients == null ? 0 : clients.size();
            side = startSide(clients);
            meter.connectStarted();
            if (connect()) {
                meter.connected();
                enter("connected baseline");
                meter.connectedBaseline(s.baselineSeconds);
                enter("creating the producer");
                if (s.capacity()) {
                    capacity(clients, window);
                } else {
                    source = mode == Mode.FLOOR ? ((FloorBroker) broker).source()
                            : new Publisher(clients.forProducer(), topic, s);
                    publish(source);
                    new Drain(s, deliveries, side, result, label, this::checkHealth, this::enter).run(source, window);
                }
            }
        } catch (Unhealthy e) {
            result.fail(e.getMessage());
        } catch (OutOfMemoryError e) {
            side = null;
            if (clients != null) {
                clients.abandon(); // frees memory at once; the runner replaces the broker after a failure
                clients = null;
            }
            result.fail("the benchmark JVM ran out of memory (" + e.getMessage() + ") while " + phase + " with "
                    + String.format("%,d", n) + " consumers; give it more heap (PULSAR_BROADCAST_JAVA_OPTS=-Xmx...)");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            result.fail("interrupted while " + phase);
        } catch (Exception e) {
            result.fail(Errors.brief(e) + " while " + phase);
        } finally {
            if (!result.ok() && broker.memoryTrouble() != null) {
                result.reason += "; the broker logged: " + broker.memoryTrouble();
            }
            finish(source, clients, window);
            result.wallSeconds = Math.round((System.nanoTime() - started) / 1e7) / 100.0;
        }
        return result;
    }

    private ConsumerSide startSide(ClientPool clients) throws IOException, InterruptedException {
        if (!s.fleet()) {
            return new JavaConsumers(mode, topic, result.subscriptions, s, clients, deliveries);
        }
        FleetProcesses fleet = new FleetProcesses(s, deliveries, s.out.resolve("fleet"), "run-" + runId);
        side = fleet;
        fleet.start(mode, topic, result.subscriptions, broker.serviceUrl(), s.totalMessages());
        meter.addClients(fleet.pids());
        result.client = new ModeResult.ClientUsage();
        result.client.processes = fleet.layout().processes;
        result.client.connections = fleet.layout().connections;
        result.client.layout = fleet.layout().describe();
        return fleet;
    }

    private void createTopic() throws PulsarAdminException {
        enter("creating the topic");
        if (mode.persistent()) {
            admin.topics().createNonPartitionedTopic(topic);
        }
    }

    /** Connects every consumer; false (with the result failed) when they did not all connect. */
    private boolean connect() throws InterruptedException, Unhealthy, IOException {
        enter("connecting");
        ConsumerSide.Outcome outcome;
        try (Progress bar = Progress.start(s.progress, "connect " + label, n)) {
            outcome = side.connect(() -> broker.alive() && HeapGuard.check() == null,
                    () -> bar.stepTo(side.connected()));
        }
        side.collect();
        result.connect = ResultCollector.connect(trackers, outcome);
        checkHealth();
        if (outcome.timedOut) {
            result.fail(String.format("timed out connecting: %,d of %,d consumers connected after %d s"
                    + " (--connect-timeout)", outcome.connected, n, outcome.elapsedMs / 1000)
                    + (outcome.firstError == null ? "" : "; first error: " + outcome.firstError));
        } else if (outcome.failed > 0) {
            result.fail(String.format("%,d of %,d consumers failed to connect; first error: %s", outcome.failed, n,
                    outcome.firstError));
        }
        return result.ok();
    }

    private void publish(MessageSource source) throws InterruptedException, Unhealthy {
        enter("publishing");
        int seconds = s.warmupSeconds + s.durationSeconds;
        long giveUp = TimeUnit.SECONDS.toNanos(seconds + 60L);
        source.start();
        if (metrics != null) {
            metrics.publishingStarted(source);
        }
        PausePlan pause = PausePlan.create(s, trackers, source.startNanos());
        move = TopicMove.create(s, source.startNanos(), n);
        if (pause != null) {
            side.window(LatencyRecorder.BEFORE);
        }
        try (Progress bar = Progress.start(s.progress, "run " + label, seconds)) {
            while (!source.done().isDone()) {
                long elapsed = System.nanoTime() - source.startNanos();
                bar.stepTo(Math.min(seconds, TimeUnit.NANOSECONDS.toSeconds(elapsed)));
                bar.extra(String.format("%s sent %,d received %,d P99 %d ms",
                        source.sent() <= s.warmupMessages() ? "warm-up" : "measured", source.sent(),
                        side.firstReceipts(), side.liveP99()));
                if (pause != null) {
                    pause.tick(System.nanoTime(), side, source);
                }
                if (move != null) {
                    move.tick(System.nanoTime(), side, admin, topic);
                }
                checkHealth();
                if (elapsed > giveUp) {
                    result.notes.add("the producer had not finished " + seconds + " s after the planned end;"
                            + " stopped it");
                    break;
                }
                Thread.sleep(100);
            }
        }
        source.stop();
        if (pause != null) {
            if (!pause.started()) {
                result.notes.add("the pause was planned after the end of publishing; nothing paused");
            } else if (pause.resumeIfPaused(side, source)) {
                result.notes.add("the pause lasted past the end of publishing; resumed at the start of the drain");
            }
        }
        if (source.failed() > 0) {
            result.notes.add(source.failed() + " sends failed (" + source.rejected() + " refused as the producer's"
                    + " queue was full); first error: " + source.firstError());
            if (pause != null) {
                result.notes.add("the backlog table's catch-up waits for every sequence number up to the target, so"
                        + " with failed sends a paused consumer can count as not caught up although it holds every"
                        + " message the broker stored (the delivery columns count only the sends that succeeded)");
            }
        }
    }

    /** The capacity run's steps on one producer; {@code window} gets their span. */
    private void capacity(ClientPool clients, long[] window) throws Exception {
        Producer<byte[]> producer = Publisher.producer(clients.forProducer(), topic, s);
        try {
            enter("capacity steps");
            CapacitySteps steps = new CapacitySteps(s, deliveries, side, meter, this::checkHealth);
            result.capacity = steps.run(producer, label);
            result.capacity.stream().filter(c -> c.passed && !c.stepDown).reduce((a, b) -> b)
                    .ifPresent(c -> result.sustained = c);
            result.delivery = ResultCollector.delivery(trackers, steps.acked());
            result.delivery.totalMessages = s.totalMessages();
            Drain.noteFleet(s, result, steps.fleet());
            window[0] = steps.firstSendNanos();
            window[1] = steps.lastDeliveryNanos();
        } finally {
            producer.closeAsync();
        }
    }

    /** Ends the current phase (recording its duration) and starts {@code next}. */
    private void enter(String next) {
        long now = System.nanoTime();
        result.phasesMs.put(phase, TimeUnit.NANOSECONDS.toMillis(now - phaseStartNanos));
        phase = next;
        phaseStartNanos = now;
    }

    /** Stops the run when the broker or a fleet process died or this JVM's heap is exhausted. */
    private void checkHealth() throws Unhealthy {
        if (!broker.alive()) {
            throw new Unhealthy(broker.deathReason() + " while " + phase);
        }
        String trouble = side == null ? null : side.trouble();
        if (trouble != null) {
            throw new Unhealthy(trouble + " while " + phase);
        }
        String heap = HeapGuard.check();
        if (heap != null) {
            throw new Unhealthy(heap + " while " + phase);
        }
    }

    /** Collects what there is, stops measuring, closes clients and deletes the topic. */
    private void finish(MessageSource source, ClientPool clients, long[] window) {
        enter("collecting");
        try {
            if (move != null) {
                move.stopCommand();
            }
            if (result.delivery == null && source != null) {
                if (side != null && side.trouble() == null) {
                    side.collect();
                }
                result.delivery = ResultCollector.delivery(s, trackers, source);
            }
            if (result.connect != null && result.delivery != null) {
                result.latency = ResultCollector.latency(deliveries, source, s.warmupMessages(), s.totalMessages());
                if (pausedAny()) {
                    result.backlog = ResultCollector.backlog(s, trackers, deliveries.latency());
                }
                if (move != null) {
                    result.move = move.finish(trackers);
                }
            }
            if (deliveries.listenerError() != null) {
                result.notes.add("a listener failed: " + deliveries.listenerError());
            }
            if (s.pauseFraction > 0 && !mode.canPause()) {
                result.notes.add(mode == Mode.READERS ? "not paused: the 2.10 Reader has no pause; no backlog figures"
                        : mode == Mode.FLOOR ? "not paused: the floor server keeps no backlog"
                        : "not paused: a paused consumer of a non-persistent topic loses messages by design;"
                        + " no backlog figures");
            }
            // The window's deliveries: the measured ones and the warm-up ones that came inside it (their CPU is in it).
            meter.finish(result, window[0], window[1],
                    deliveries.latency().deliveries() + deliveries.warmupReceiptsInWindow());
            if (metrics != null) {
                metrics.finish(result, window[0], window[1]);
                if (result.capacity != null) {
                    BrokerCountedDeliveries.fill(result.capacity, metrics.series(), metrics::secondsAt);
                }
            }
            if (result.broker != null && broker instanceof ForkedBroker && broker.alive()) {
                MemoryProbe.broker(result.broker, broker.pid(), broker.adminUrl());
            }
            if (!s.fleet() && result.client != null) {
                MemoryProbe.thisJvm(result.client);
            }
        } catch (IOException | RuntimeException | OutOfMemoryError e) {
            result.notes.add("collecting the figures failed: " + Errors.brief(e));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            meter.close();
            if (metrics != null) {
                metrics.close();
            }
            close(source, clients);
        }
    }

    private void close(MessageSource source, ClientPool clients) {
        enter("closing");
        if (source != null) {
            source.close();
        }
        if (brokerGoesAway()) {
            if (side != null) {
                side.abandon();
            }
            if (clients != null) {
                clients.abandon();
            }
        } else {
            if (side != null) {
                side.close(120);
            }
            if (clients != null) {
                clients.closeInBackground();
            }
            deleteTopic();
        }
        enter("done");
    }

    private boolean pausedAny() {
        for (ConsumerTracker t : trackers) {
            if (t.pauseGroup()) {
                return true;
            }
        }
        return false;
    }

    /**
     * True when the runner stops the broker after this run (a fresh broker per run, or a forked broker after a
     * failure): then nothing needs closing or deleting politely.
     */
    private boolean brokerGoesAway() {
        return freshBroker || (!result.ok() && s.forkedBroker()) || !broker.alive();
    }

    /** Frees the broker of the topic and its subscriptions before the next run. */
    private void deleteTopic() {
        if (mode == Mode.FLOOR) {
            return;
        }
        try {
            admin.topics().deleteAsync(topic, true).get(120, TimeUnit.SECONDS);
        } catch (Exception e) {
            result.notes.add("deleting the topic failed: " + Errors.brief(e));
        }
    }
}
