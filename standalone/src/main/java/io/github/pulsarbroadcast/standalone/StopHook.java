package io.github.pulsarbroadcast.standalone;

import java.io.PrintStream;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The standalone's shutdown hook (Ctrl-C, SIGTERM): closes the cluster, and never lets stopping take longer than
 * {@link #LIMIT} plus {@link #DUMP_WAIT}. Each broker's close is bounded by {@link EmbeddedPulsar} (a minute), but
 * ZooKeeper's and the bookie's stops are not; when the cluster's close has not ended by the limit, a watchdog prints
 * every thread's stack (where the stop hangs, for a bug report) and halts the JVM, as an operator would with
 * {@code kill -9}.
 *
 * <p>Threading: {@link #run} runs once on the JVM's shutdown-hook thread; the watchdog is a daemon thread of its own
 * (it only halts, and only when the close has not ended); it prints the stacks on a third daemon thread and halts
 * after {@link #DUMP_WAIT} whether or not that printing ended, so a blocked standard output cannot hold the JVM.
 * {@link #stopped} (a latch) hands the end of the close over to the command's main thread.
 */
final class StopHook extends Thread {

    /** How long stopping may take: a broker's bounded close (60 s) and the storage's stop, with room to spare. */
    static final Duration LIMIT = Duration.ofSeconds(90);

    /** How long the watchdog lets the stacks be printed before it halts anyway. */
    static final Duration DUMP_WAIT = Duration.ofSeconds(10);

    /** What the watchdog prints before it halts; the test of the command looks for it. */
    static final String HALTING = "Stopping took more than";

    private final AutoCloseable cluster;
    private final CountDownLatch stopped;
    private final PrintStream out;
    private final Duration limit;
    private final Duration dumpWait;
    private final Runnable halt;

    /** The hook of a standalone: the output is {@code System.out}, the limit {@link #LIMIT}, the halt the JVM's. */
    static StopHook forJvm(AutoCloseable cluster, CountDownLatch stopped) {
        return new StopHook(cluster, stopped, System.out, LIMIT, DUMP_WAIT, () -> Runtime.getRuntime().halt(1));
    }

    StopHook(AutoCloseable cluster, CountDownLatch stopped, PrintStream out, Duration limit, Duration dumpWait,
             Runnable halt) {
        super("standalone-shutdown");
        this.cluster = cluster;
        this.stopped = stopped;
        this.out = out;
        this.limit = limit;
        this.dumpWait = dumpWait;
        this.halt = halt;
    }

    @Override
    public void run() {
        // The watchdog first, before anything is printed: a blocked standard output must not hold the stop.
        Thread watchdog = new Thread(this::haltAfterLimit, "standalone-stop-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
        out.println("Stopping pulsar-broadcast standalone...");
        long start = System.nanoTime();
        try {
            cluster.close();
            out.printf("Stopped in %.1f s%n", (System.nanoTime() - start) / 1e9);
        } catch (Exception e) {
            out.println("Stopping failed: " + e);
        } finally {
            stopped.countDown();
        }
    }

    private void haltAfterLimit() {
        try {
            if (stopped.await(limit.toMillis(), TimeUnit.MILLISECONDS)) {
                return;
            }
        } catch (InterruptedException e) {
            return;
        }
        Thread printer = new Thread(() -> {
            out.println(HALTING + " " + limit.toMillis() / 1000.0 + " s; halting. Every thread's stack:");
            out.println(); // one blank line before each thread, as between threads
            printStacks(out);
            out.flush();
        }, "standalone-stop-stacks");
        printer.setDaemon(true);
        printer.start();
        try {
            printer.join(dumpWait.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // halting anyway
        }
        halt.run();
    }

    /** Every live thread's name, state and whole stack, one blank line between threads. */
    static void printStacks(PrintStream out) {
        StringBuilder dump = new StringBuilder();
        for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
            Thread t = e.getKey();
            dump.append('"').append(t.getName()).append("\" ").append(t.getState())
                    .append(t.isDaemon() ? " daemon" : "").append('\n');
            for (StackTraceElement frame : e.getValue()) {
                dump.append("\tat ").append(frame).append('\n');
            }
            dump.append('\n');
        }
        out.print(dump);
    }
}
