package io.github.pulsarbroadcast.bench;

import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.admin.PulsarAdminException;

/**
 * One mode at one N, on a fresh topic: connect the N consumers, publish the warm-up and the measured messages at
 * the fixed rate (pausing and resuming the backlog group when planned), drain, then collect the figures and close
 * everything. It never throws: whatever stops it (connect time-out, failed subscribes, the broker dying, this JVM
 * running out of memory) becomes the result's {@code failed} status and reason.
 *
 * <p>Threading: {@link #run} runs on the main thread, which also polls the counters that the clients' threads
 * update (see {@link Deliveries}, {@link Fleet}, {@link Publisher}).
 */
final class ModeRun {

    /** Thrown inside the run when the broker process exits or this JVM runs out of heap. Threading: main thread. */
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
    private final ConsumerTracker[] trackers;
    private final ModeResult result;
    private String phase = "starting";
    /** This JVM's CPU time when every consumer was connected, or -1 before; main thread only. */
    private long cpuAtConnected = -1;
    private long phaseStartNanos = System.nanoTime();

    ModeRun(BenchSettings s, Mode mode, int n, Broker broker, PulsarAdmin admin, boolean freshBroker, String runId) {
        this.s = s;
        this.mode = mode;
        this.n = n;
        this.broker = broker;
        this.admin = admin;
        this.freshBroker = freshBroker;
        int subscriptions = subscriptions(mode, n, s.splitSubscriptions);
        this.topic = (mode.persistent() ? "persistent://" : "non-persistent://") + s.namespace + "/bench-" + runId
                + "-" + mode.cliName() + "-" + n;
        this.label = String.format("%s N=%,d", mode, n);
        this.trackers = new ConsumerTracker[n];
        boolean pausing = mode.canPause() && s.pauseFraction > 0;
        for (int i = 0; i < n; i++) {
            trackers[i] = new ConsumerTracker(i, Fleet.subscriptionOf(mode, i, subscriptions),
                    pausing && PausePlan.inPauseGroup(i, s.pauseFraction));
        }
        this.result = new ModeResult(mode, n, subscriptions);
        result.topic = topic;
    }

    /** Subscriptions that {@code n} consumers use in {@code mode} (readers count as one each). */
    static int subscriptions(Mode mode, int n, int split) {
        switch (mode) {
            case BROADCAST:
                return 1;
            case SPLIT:
                return Math.min(split, n);
            default:
                return n;
        }
    }

    ConsumerTracker[] trackers() {
        return trackers;
    }

    ModeResult run() {
        long started = System.nanoTime();
        long cpuAtStart = ResultCollector.processCpuNanos();
        Deliveries deliveries = new Deliveries(trackers, s.warmupMessages());
        BrokerMonitor monitor = BrokerMonitor.start(broker.pid(), freshBroker);
        ClientPool clients = null;
        Fleet fleet = null;
        Publisher publisher = null;
        try {
            createTopic();
            enter("creating clients");
            clients = new ClientPool(broker.serviceUrl(), n, s);
            result.clients = clients.size();
            fleet = new Fleet(mode, topic, result.subscriptions, s, clients, deliveries);
            if (connect(fleet)) {
                cpuAtConnected = ResultCollector.processCpuNanos();
                if (monitor != null) {
                    monitor.connected();
                }
                enter("creating the producer");
                publisher = new Publisher(clients.forProducer(), topic, s);
                publish(fleet, publisher, deliveries);
                drain(fleet, publisher, deliveries);
            }
        } catch (Unhealthy e) {
            result.fail(e.getMessage());
        } catch (OutOfMemoryError e) {
            fleet = null;
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
            finish(deliveries, monitor, publisher, fleet, clients, cpuAtStart);
            result.wallSeconds = Math.round((System.nanoTime() - started) / 1e7) / 100.0;
        }
        return result;
    }

    private void createTopic() throws PulsarAdminException {
        enter("creating the topic");
        if (mode.persistent()) {
            admin.topics().createNonPartitionedTopic(topic);
        }
    }

    /** Connects every consumer; false (with the result failed) when they did not all connect. */
    private boolean connect(Fleet fleet) throws InterruptedException, Unhealthy {
        enter("connecting");
        Fleet.Outcome outcome;
        try (Progress bar = Progress.start(s.progress, "connect " + label, n)) {
            outcome = fleet.connect(() -> broker.alive() && HeapGuard.check() == null,
                    () -> bar.stepTo(fleet.connected()));
        }
        result.connect = ResultCollector.connect(trackers, outcome);
        checkHealth();
        if (outcome.timedOut) {
            result.fail(String.format("timed out connecting: %,d of %,d consumers connected after %d s"
                    + " (--connect-timeout)", outcome.connected, n, outcome.elapsedMs / 1000));
        } else if (outcome.failed > 0) {
            result.fail(String.format("%,d of %,d consumers failed to connect; first error: %s", outcome.failed, n,
                    outcome.firstError));
        }
        return result.ok();
    }

    private void publish(Fleet fleet, Publisher publisher, Deliveries deliveries)
            throws InterruptedException, Unhealthy {
        enter("publishing");
        int seconds = s.warmupSeconds + s.durationSeconds;
        long giveUp = TimeUnit.SECONDS.toNanos(seconds + 60L);
        publisher.start();
        PausePlan pause = PausePlan.create(s, trackers, publisher.startNanos());
        if (pause != null) {
            deliveries.latency().window(LatencyRecorder.BEFORE);
        }
        try (Progress bar = Progress.start(s.progress, "run " + label, seconds)) {
            while (!publisher.done().isDone()) {
                long elapsed = System.nanoTime() - publisher.startNanos();
                bar.stepTo(Math.min(seconds, TimeUnit.NANOSECONDS.toSeconds(elapsed)));
                bar.extra(status(publisher, deliveries));
                if (pause != null) {
                    pause.tick(System.nanoTime(), fleet, publisher, deliveries);
                }
                checkHealth();
                if (elapsed > giveUp) {
                    result.notes.add("the producer had not finished " + seconds + " s after the planned end");
                    break;
                }
                Thread.sleep(100);
            }
        }
        if (pause != null) {
            if (!pause.started()) {
                result.notes.add("the pause was planned after the end of publishing; nothing paused");
            } else if (pause.resumeIfPaused(fleet, publisher, deliveries)) {
                result.notes.add("the pause lasted past the end of publishing; resumed at the start of the drain");
            }
        }
        if (publisher.failed() > 0) {
            result.notes.add(publisher.failed() + " sends failed; first error: " + publisher.firstError());
        }
    }

    private String status(Publisher publisher, Deliveries deliveries) {
        boolean warm = publisher.sent() <= s.warmupMessages();
        return String.format("%s sent %,d received %,d P99 %d ms", warm ? "warm-up" : "measured", publisher.sent(),
                deliveries.firstReceipts(), deliveries.latency().liveP99());
    }

    private void drain(Fleet fleet, Publisher publisher, Deliveries deliveries)
            throws InterruptedException, Unhealthy {
        enter("draining");
        long expected = (long) publisher.acked().cardinality() * n;
        long start = System.nanoTime();
        long deadline = start + TimeUnit.SECONDS.toNanos(s.drainTimeoutSeconds);
        long idle = TimeUnit.SECONDS.toNanos(s.drainIdleSeconds);
        boolean complete = false;
        try (Progress bar = Progress.start(s.progress, "drain " + label, expected)) {
            while (true) {
                long now = System.nanoTime();
                bar.stepTo(Math.min(expected, deliveries.firstReceipts()));
                complete = deliveries.firstReceipts() >= expected && deliveries.catchingUp() == 0;
                boolean quiet = now - Math.max(start, deliveries.lastReceiptNanos()) > idle;
                if (complete || quiet || now > deadline) {
                    break;
                }
                checkHealth();
                Thread.sleep(50);
            }
        }
        result.delivery = ResultCollector.delivery(s, trackers, publisher);
        result.delivery.drainMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - publisher.lastSendNanos());
        result.delivery.drainCutShort = !complete;
        if (!complete) {
            result.notes.add(String.format("drain ended after %d s (--drain-timeout %d s, --drain-idle %d s) with"
                    + " %,d deliveries missing", TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start),
                    s.drainTimeoutSeconds, s.drainIdleSeconds, Math.max(0, expected - deliveries.firstReceipts())));
        }
    }

    /** Ends the current phase (recording its duration) and starts {@code next}. */
    private void enter(String next) {
        long now = System.nanoTime();
        result.phasesMs.put(phase, TimeUnit.NANOSECONDS.toMillis(now - phaseStartNanos));
        phase = next;
        phaseStartNanos = now;
    }

    /** Stops the run when the broker died or this JVM's heap is exhausted. */
    private void checkHealth() throws Unhealthy {
        if (!broker.alive()) {
            throw new Unhealthy(broker.deathReason() + " while " + phase);
        }
        String heap = HeapGuard.check();
        if (heap != null) {
            throw new Unhealthy(heap + " while " + phase);
        }
    }

    /** Collects what there is, stops measuring, closes clients and deletes the topic. */
    private void finish(Deliveries deliveries, BrokerMonitor monitor, Publisher publisher, Fleet fleet,
            ClientPool clients, long cpuAtStart) {
        enter("collecting");
        try {
            if (result.delivery == null && publisher != null) {
                result.delivery = ResultCollector.delivery(s, trackers, publisher);
            }
            if (result.connect != null && result.delivery != null) {
                result.latency = ResultCollector.latency(deliveries.latency());
                if (pausedAny()) {
                    result.backlog = ResultCollector.backlog(s, trackers, deliveries.latency());
                }
            }
            if (deliveries.listenerError() != null) {
                result.notes.add("a listener failed: " + deliveries.listenerError());
            }
            if (s.pauseFraction > 0 && !mode.canPause()) {
                result.notes.add(mode == Mode.READERS ? "not paused: the 2.10 Reader has no pause; no backlog figures"
                        : "not paused: a paused consumer of a non-persistent topic loses messages by design;"
                        + " no backlog figures");
            }
            result.broker = monitor == null ? null : monitor.stop();
            result.client = ResultCollector.client(cpuAtStart, cpuAtConnected);
        } catch (RuntimeException | OutOfMemoryError e) {
            result.notes.add("collecting the figures failed: " + Errors.brief(e));
        } finally {
            enter("closing");
            if (publisher != null) {
                publisher.close();
            }
            if (brokerGoesAway()) {
                if (clients != null) {
                    clients.abandon();
                }
            } else {
                if (fleet != null) {
                    fleet.close(120);
                }
                if (clients != null) {
                    clients.closeInBackground();
                }
                deleteTopic();
            }
            enter("done");
        }
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
        try {
            admin.topics().deleteAsync(topic, true).get(120, TimeUnit.SECONDS);
        } catch (Exception e) {
            result.notes.add("deleting the topic failed: " + Errors.brief(e));
        }
    }
}
