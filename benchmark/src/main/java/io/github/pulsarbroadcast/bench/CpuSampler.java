package io.github.pulsarbroadcast.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongUnaryOperator;

/**
 * CPU time and resident memory of three groups of processes over one run, sampled every {@value #PERIOD_MS} ms from
 * {@code /proc} ({@link ProcStats}): the broker; the consumers (the fleet processes, or this JVM when the stock
 * Java client runs the consumers here, with the producer); and this JVM when the consumers are elsewhere (producer,
 * polling, sampling). Beside them the whole machine: its busy CPU (every process, so that CPU taken by something
 * else shows) and the CPU its host stole from it (a virtual machine's cores ready to run while the host ran
 * something else: a run that lost CPU that way measured the machine, not the broker). {@link #cpuSeconds}
 * interpolates between samples, so that CPU can be read for any window of the run (the connect phase, the idle
 * baselines, the measured window from the first measured send to the last delivery). The broker's samples also
 * count its minor page faults ({@link #brokerMinorFaults}).
 *
 * <p>Threading: the main thread starts, adds processes and reads; one daemon thread ("bench-cpu-sampler") samples.
 * The sample lists (the thread samples, their running totals and count too) are guarded by {@code this} (sample,
 * read), the pid lists are copy-on-write;
 * {@link #peakBrokerRss} is an atomic.
 */
final class CpuSampler implements AutoCloseable {

    /** Which processes. Threading: immutable. */
    enum Group { BROKER, CLIENTS, BENCH, MACHINE, STOLEN }

    private static final long PERIOD_MS = 200;
    /** Reading every thread of the broker costs about 2 ms (150 threads): once a second is enough for 10-s+ windows. */
    private static final int THREAD_EVERY = 5;

    private final List<Long> brokerPids = new CopyOnWriteArrayList<>();
    private final List<Long> clientPids = new CopyOnWriteArrayList<>();
    private final List<Long> benchPids = new CopyOnWriteArrayList<>();
    private final List<long[]> brokerSamples = new ArrayList<>();
    private final List<long[]> clientSamples = new ArrayList<>();
    private final List<long[]> benchSamples = new ArrayList<>();
    private final List<long[]> machineSamples = new ArrayList<>();
    private final List<long[]> stolenSamples = new ArrayList<>();
    /**
     * The broker processes' CPU by group of threads ({@link ThreadCpu}): {nanoTime, the processes' own CPU micros,
     * then one CPU micros figure per group}, every {@value #THREAD_EVERY}th sample and at each {@link #mark}.
     */
    private final List<long[]> threadSamples = new ArrayList<>();
    private final ThreadCpu.Totals threadTotals = new ThreadCpu.Totals();
    private int periodicSamples;
    /** Per pid the first CPU reading and the last, so that a process added late or gone stays constant. */
    private final Map<Long, Long> lastCpuMicros = new ConcurrentHashMap<>();
    /** Per broker pid its last count of minor page faults (a process gone keeps it); written in {@link #sample}. */
    private final Map<Long, Long> lastMinorFaults = new ConcurrentHashMap<>();
    private final AtomicLong peakBrokerRss = new AtomicLong(-1);
    private final ScheduledExecutorService sampler;

    /** Samples {@code brokerPid} (null: unknown) and this JVM, as a consumer process when {@code consumersHere}. */
    CpuSampler(Long brokerPid, boolean consumersHere) {
        if (brokerPid != null && ProcStats.available(brokerPid)) {
            brokerPids.add(brokerPid);
        }
        (consumersHere ? clientPids : benchPids).add(ProcessHandle.current().pid());
        sampler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "bench-cpu-sampler");
            t.setDaemon(true);
            return t;
        });
        sample(true);
        sampler.scheduleAtFixedRate(this::periodicSample, PERIOD_MS, PERIOD_MS, TimeUnit.MILLISECONDS);
    }

    /** True when the broker's process is known and readable. */
    boolean measuresBroker() {
        return !brokerPids.isEmpty();
    }

    /** Adds a client process (a fleet JVM): its CPU counts from now on. */
    void addClient(long pid) {
        lastCpuMicros.put(pid, micros(ProcStats.cpuSeconds(pid)));
        clientPids.add(pid);
        sample(false);
    }

    private static long micros(double seconds) {
        return seconds < 0 ? -1 : Math.round(seconds * 1e6);
    }

    private synchronized void periodicSample() {
        sample(++periodicSamples % THREAD_EVERY == 0);
    }

    private synchronized void sample(boolean threads) {
        long now = System.nanoTime();
        brokerSamples.add(new long[] {now, total(brokerPids), minorFaults(brokerPids)});
        clientSamples.add(new long[] {now, total(clientPids)});
        benchSamples.add(new long[] {now, total(benchPids)});
        double[] machine = ProcStats.machineCpuSeconds();
        if (machine != null) {
            machineSamples.add(new long[] {now, micros(machine[0])});
            stolenSamples.add(new long[] {now, micros(machine[1])});
        }
        for (long pid : brokerPids) {
            peakBrokerRss.accumulateAndGet(ProcStats.rssBytes(pid), Math::max);
        }
        if (threads) {
            sampleThreads(now);
        }
    }

    private void sampleThreads(long now) {
        long[] s = new long[ThreadCpu.OTHER + 3];
        s[0] = now;
        threadTotals.beginReading();
        for (long pid : brokerPids) {
            long process = micros(ProcStats.cpuSeconds(pid));
            if (process < 0 || !ThreadCpu.read(pid, threadTotals)) {
                return; // gone, or the sampler is being stopped: no thread sample this time
            }
            s[1] += process;
        }
        threadTotals.endReading();
        long[] groups = threadTotals.groups();
        System.arraycopy(groups, 0, s, 2, groups.length);
        threadSamples.add(s);
    }

    /** CPU microseconds of {@code pids} now; a process that can no longer be read counts with its last reading. */
    private long total(List<Long> pids) {
        return sum(pids, pid -> micros(ProcStats.cpuSeconds(pid)), lastCpuMicros);
    }

    /** Minor page faults of {@code pids} now, as {@link #total} counts CPU. */
    private long minorFaults(List<Long> pids) {
        return sum(pids, ProcStats::minorFaults, lastMinorFaults);
    }

    /** The sum of {@code read} over {@code pids} (-1: unreadable), each pid that cannot be read at its {@code last}. */
    private static long sum(List<Long> pids, LongUnaryOperator read, Map<Long, Long> last) {
        long sum = 0;
        for (long pid : pids) {
            long value = read.applyAsLong(pid);
            if (value >= 0) {
                last.put(pid, value);
            }
            sum += Math.max(0, last.getOrDefault(pid, 0L));
        }
        return sum;
    }

    /** A sample now (at the start or end of a phase, for precision). */
    void mark() {
        sample(true);
    }

    /** CPU seconds of {@code group} between two {@link System#nanoTime} instants, interpolated between samples. */
    synchronized double cpuSeconds(Group group, long fromNanos, long toNanos) {
        List<long[]> s = samples(group);
        return (at(s, toNanos) - at(s, fromNanos)) / 1e6;
    }

    /**
     * The broker's minor page faults between two {@link System#nanoTime} instants, interpolated between samples: pages
     * it touched for the first time (a fresh heap as it grows), each zeroed by the kernel on the broker's CPU.
     */
    synchronized long brokerMinorFaults(long fromNanos, long toNanos) {
        return Math.round(at(brokerSamples, toNanos, 2) - at(brokerSamples, fromNanos, 2));
    }

    /**
     * The broker's CPU seconds by group of threads between two {@link System#nanoTime} instants, interpolated between
     * thread samples: {@link ThreadCpu#OTHER} + 2 figures, one per group ({@link ThreadCpu#name}) and last the part
     * of the processes' own CPU that no group holds (threads that ended); null without two thread samples.
     */
    synchronized double[] threadSeconds(long fromNanos, long toNanos) {
        if (threadSamples.size() < 2) {
            return null;
        }
        double[] out = new double[ThreadCpu.OTHER + 2];
        double inGroups = 0;
        for (int g = 0; g <= ThreadCpu.OTHER; g++) {
            out[g] = (at(threadSamples, toNanos, g + 2) - at(threadSamples, fromNanos, g + 2)) / 1e6;
            inGroups += out[g];
        }
        double process = (at(threadSamples, toNanos, 1) - at(threadSamples, fromNanos, 1)) / 1e6;
        out[ThreadCpu.OTHER + 1] = Math.max(0, process - inGroups);
        return out;
    }

    /** True when the machine's CPU ({@link Group#MACHINE}, {@link Group#STOLEN}) is known (Linux). */
    synchronized boolean measuresMachine() {
        return !machineSamples.isEmpty();
    }

    /**
     * The highest CPU seconds per second of {@code group} over any span of at least {@code sliceNanos} between
     * samples taken from {@code fromNanos} to {@code toNanos}; 0 without two such samples.
     */
    synchronized double peakRate(Group group, long fromNanos, long toNanos, long sliceNanos) {
        return peakRate(samples(group), fromNanos, toNanos, sliceNanos);
    }

    /** {@link #peakRate(Group, long, long, long)} over {@code samples} ({nanoTime, CPU micros} pairs in order). */
    static double peakRate(List<long[]> samples, long fromNanos, long toNanos, long sliceNanos) {
        double peak = 0;
        int j = 0;
        for (int i = 0; i < samples.size(); i++) {
            long[] a = samples.get(i);
            if (a[0] < fromNanos) {
                continue;
            }
            j = Math.max(j, i + 1);
            while (j < samples.size() && samples.get(j)[0] - a[0] < sliceNanos) {
                j++;
            }
            if (j >= samples.size() || samples.get(j)[0] > toNanos) {
                break;
            }
            long[] b = samples.get(j);
            peak = Math.max(peak, (b[1] - a[1]) / 1e6 / ((b[0] - a[0]) / 1e9));
        }
        return peak;
    }

    private List<long[]> samples(Group group) {
        switch (group) {
            case BROKER:
                return brokerSamples;
            case CLIENTS:
                return clientSamples;
            case BENCH:
                return benchSamples;
            case MACHINE:
                return machineSamples;
            default:
                return stolenSamples;
        }
    }

    private static double at(List<long[]> samples, long t) {
        return at(samples, t, 1);
    }

    /** Column {@code c} of {nanoTime, ...} samples at {@code t}, interpolated linearly between the two around it. */
    static double at(List<long[]> samples, long t, int c) {
        if (samples.isEmpty()) {
            return 0;
        }
        if (t <= samples.get(0)[0]) {
            return samples.get(0)[c];
        }
        for (int i = 1; i < samples.size(); i++) {
            long[] b = samples.get(i);
            if (t <= b[0]) {
                long[] a = samples.get(i - 1);
                double f = b[0] == a[0] ? 1 : (double) (t - a[0]) / (b[0] - a[0]);
                return a[c] + f * (b[c] - a[c]);
            }
        }
        return samples.get(samples.size() - 1)[c];
    }

    /** The largest broker resident set seen, or -1. */
    long peakBrokerRss() {
        return peakBrokerRss.get();
    }

    @Override
    public void close() {
        sampler.shutdownNow();
        sample(true);
    }
}
