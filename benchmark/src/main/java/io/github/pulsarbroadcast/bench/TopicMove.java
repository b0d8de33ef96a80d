package io.github.pulsarbroadcast.bench;

import io.github.pulsarbroadcast.bench.core.ConsumerTracker;
import io.github.pulsarbroadcast.bench.core.Percentiles;
import java.io.IOException;
import java.nio.file.Path;
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
 * topic's full name, its output goes to {@code move-command.log} in the output folder, and its exit ends the move's
 * "answered" time (a non-zero exit is the move's error).
 *
 * <p>Threading: the main thread calls {@link #tick} from its polling loop and {@link #finish} after the collect; the
 * unload's answer arrives on the admin client's thread, the command's exit on the JDK's process reaper thread
 * ({@link #unloadedNanos} and {@link #unloadError} are volatile).
 */
final class TopicMove {

    private final long dueNanos;
    private final int afterSeconds;
    private final int consumers;
    /** The shell command that moves the topic, or null for the admin API's unload. */
    private final String command;
    private final Path log;
    private long askedNanos;
    private long subscribesBefore;
    private long backNanos;
    private volatile long unloadedNanos;
    private volatile Throwable unloadError;

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
        } else if (askedNanos != 0 && backNanos == 0 && unloadedNanos != 0
                && side.subscribes() - subscribesBefore >= consumers && side.active() >= consumers) {
            backNanos = nowNanos;
        }
    }

    /** Starts {@code line} through {@code sh -c}; its exit sets {@link #unloadedNanos}. */
    private void run(String line) {
        ProcessBuilder b = new ProcessBuilder("sh", "-c", line).redirectErrorStream(true);
        if (log != null) {
            b.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        } else {
            b.redirectOutput(ProcessBuilder.Redirect.DISCARD);
        }
        try {
            b.start().onExit().whenComplete((p, e) -> {
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

    /** The move's figures; the trackers hold each consumer's duplicates (after the collect). */
    ModeResult.Move finish(ConsumerTracker[] trackers) {
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
