package io.github.pulsarbroadcast.bench;

import io.github.pulsarbroadcast.bench.core.ConsumerTracker;
import io.github.pulsarbroadcast.bench.core.Percentiles;
import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.apache.pulsar.client.admin.PulsarAdmin;

/**
 * A topic move during the measured period ({@code --move-topic-after}): the topic is unloaded through the admin API,
 * as a load balancer or an operator moves it; the broker closes every consumer, and each reconnects and resumes where
 * the broker puts it (its own saved position with the plugin's durable positions; the subscription's mark-delete
 * position without them). Records when the unload was asked and answered and when every consumer was subscribed
 * again (the fleet counts its subscribes), and at the end each consumer's duplicates: a move is where they come from.
 * With {@code --move-command} the move is a shell command instead of the unload (for example a kill -9 of the
 * broker that owns the topic, {@code bin/pulsar-broadcast cluster kill}): {@code {topic}} in it is replaced by the
 * topic's full name, its output goes to {@code move-command.log} in the output folder (after a line naming the run),
 * and its exit ends the move's "answered" time (a non-zero exit is the move's error). A command still running when the
 * run ends gets {@value #COMMAND_GRACE_SECONDS} s more, then it and its child processes are killed (the move's error
 * says so), so that it cannot act on the next run.
 *
 * <p>Threading: the main thread calls {@link #tick} from its polling loop and {@link #finish} after the collect; the
 * unload's answer arrives on the admin client's thread, the command's exit on the JDK's process reaper thread
 * ({@link #unloadedNanos}, {@link #unloadError} and {@link #commandStopped} are volatile).
 */
final class TopicMove {

    /** How long a move command still running at the end of the run may take before it is killed. */
    static final int COMMAND_GRACE_SECONDS = 60;

    private final long dueNanos;
    private final int afterSeconds;
    private final int consumers;
    /** The shell command that moves the topic, or null for the admin API's unload. */
    private final String command;
    private final Path log;
    /** The move command's process (main thread only); null without one. */
    private Process process;
    private long askedNanos;
    private long subscribesBefore;
    private long backNanos;
    private volatile long unloadedNanos;
    private volatile Throwable unloadError;
    /** Set (main thread) before a move command that outlived the run is killed; its exit then changes nothing. */
    private volatile boolean commandStopped;

    private TopicMove(long dueNanos, int afterSeconds, int consumers, String command, Path log) {
        this.dueNanos = dueNanos;
        this.afterSeconds = afterSeconds;
        this.consumers = consumers;
        this.command = command;
        this.log = log;
    }

    /** The move of a run whose publisher starts at {@code startNanos}, or null when none is planned. */
    static TopicMove create(BenchSettings s, long startNanos, int consumers) {
        if (s.moveTopicAfterSeconds <= 0) {
            return null;
        }
        return new TopicMove(startNanos + TimeUnit.SECONDS.toNanos(s.warmupSeconds + s.moveTopicAfterSeconds),
                s.moveTopicAfterSeconds, consumers, s.moveCommand,
                s.out == null ? null : s.out.resolve("move-command.log"));
    }

    /** Asks for the unload when due; then notes when every consumer has subscribed again. */
    void tick(long nowNanos, ConsumerSide side, PulsarAdmin admin, String topic) {
        if (askedNanos == 0 && nowNanos >= dueNanos) {
            askedNanos = nowNanos;
            subscribesBefore = side.subscribes();
            if (command == null) {
                admin.topics().unloadAsync(topic).whenComplete((v, e) -> {
                    unloadError = e;
                    unloadedNanos = System.nanoTime();
                });
            } else {
                run(command.replace("{topic}", topic));
            }
        } else if (askedNanos != 0 && backNanos == 0 && side.subscribes() - subscribesBefore >= consumers
                && side.active() >= consumers) {
            backNanos = nowNanos;
        }
    }

    /** Starts {@code line} through {@code sh -c}; its exit sets {@link #unloadedNanos}. */
    private void run(String line) {
        ProcessBuilder b = new ProcessBuilder("sh", "-c", line).redirectErrorStream(true)
                .redirectInput(new File("/dev/null"));
        try {
            if (log != null) {
                try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(log, StandardCharsets.UTF_8,
                        StandardOpenOption.CREATE, StandardOpenOption.APPEND))) {
                    w.println("# " + Instant.now() + ", " + afterSeconds + " s into the measured period: " + line);
                }
                b.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
            } else {
                b.redirectOutput(ProcessBuilder.Redirect.DISCARD);
            }
            process = b.start();
            process.onExit().whenComplete((p, e) -> {
                if (commandStopped) {
                    return;
                }
                if (e != null || p.exitValue() != 0) {
                    unloadError = e != null ? e : new IOException("the move command exited with " + p.exitValue()
                            + (log == null ? "" : " (output in " + log.getFileName() + ")") + ": " + line);
                }
                unloadedNanos = System.nanoTime();
            });
        } catch (IOException e) {
            unloadError = e;
            unloadedNanos = System.nanoTime();
        }
    }

    /**
     * Stops a move command that still runs at the end of the run, after {@value #COMMAND_GRACE_SECONDS} s more (the
     * run calls it however it ended; {@link #finish} too).
     */
    void stopCommand() {
        if (process == null || !process.isAlive()) {
            return;
        }
        try {
            process.waitFor(COMMAND_GRACE_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (process.isAlive()) {
            commandStopped = true;
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            unloadError = new IOException("the move command still ran " + COMMAND_GRACE_SECONDS
                    + " s after the end of the run; stopped it and its child processes");
        }
    }

    /** The move's figures; the trackers hold each consumer's duplicates (after the collect). */
    ModeResult.Move finish(ConsumerTracker[] trackers) {
        stopCommand();
        ModeResult.Move m = new ModeResult.Move();
        if (askedNanos == 0) {
            m.note = "the move was planned after the end of publishing; nothing moved";
            return m;
        }
        m.afterSeconds = afterSeconds;
        m.by = command == null ? "unload" : command;
        m.unloadSeconds = unloadedNanos == 0 ? null : seconds(unloadedNanos - askedNanos, 2);
        m.allBackSeconds = backNanos == 0 ? null : seconds(backNanos - askedNanos, 2);
        m.unloadError = unloadError == null ? null : Errors.brief(unloadError);
        Histogram h = new Histogram(3);
        for (ConsumerTracker t : trackers) {
            long d = t.duplicates();
            h.recordValue(d);
            m.consumersWithDuplicates += d > 0 ? 1 : 0;
            m.duplicates += d;
        }
        m.duplicatesPerConsumer = Percentiles.of(h);
        return m;
    }

    private static double seconds(long nanos, int decimals) {
        double scale = Math.pow(10, decimals);
        return Math.round(nanos / 1e9 * scale) / scale;
    }
}
