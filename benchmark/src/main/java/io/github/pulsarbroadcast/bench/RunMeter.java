package io.github.pulsarbroadcast.bench;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The CPU figures of one run, from a {@link CpuSampler}: broker and clients over the connect phase and the rest of
 * the run, their idle baselines (nothing connected; everyone connected but no messages), and CPU over the measured
 * window (first measured send to last delivery) per measured delivery; the connect phase's broker CPU per subscribe;
 * and the machine's CPU taken by other processes or stolen by its host ({@link ModeResult.MachineUsage}).
 *
 * <p>Threading: the main thread only (the sampler has its own thread).
 */
final class RunMeter implements AutoCloseable {

    /**
     * CPU stolen by the host above which a run is flagged in its notes: half a CPU-second over the run, or a
     * quarter of a core over some second of it ({@code /proc/stat} counts in 10 ms ticks).
     */
    static final double STOLEN_NOTE_SECONDS = 0.5;
    static final double STOLEN_NOTE_PEAK = 0.25;

    private final CpuSampler sampler;
    private final Long brokerPid;
    private final boolean freshBroker;
    private long connectStart;
    private long connected = -1;
    private double[] idle;
    private double[] busyIdle;

    RunMeter(Long brokerPid, boolean freshBroker, boolean consumersHere) {
        this.sampler = new CpuSampler(brokerPid, consumersHere);
        this.brokerPid = brokerPid;
        this.freshBroker = freshBroker;
        this.connectStart = System.nanoTime();
    }

    void addClients(List<Long> pids) {
        pids.forEach(sampler::addClient);
    }

    /** Measures the idle CPU of broker and clients for {@code seconds} (before the connect phase). */
    void idleBaseline(int seconds) throws InterruptedException {
        idle = baseline(seconds);
    }

    /** Measures the CPU with everyone connected and nothing published, for {@code seconds}. */
    void connectedBaseline(int seconds) throws InterruptedException {
        busyIdle = baseline(seconds);
    }

    private double[] baseline(int seconds) throws InterruptedException {
        if (seconds <= 0) {
            return null;
        }
        sampler.mark();
        long from = System.nanoTime();
        TimeUnit.SECONDS.sleep(seconds);
        sampler.mark();
        long to = System.nanoTime();
        double span = (to - from) / 1e9;
        return new double[] {sampler.cpuSeconds(CpuSampler.Group.BROKER, from, to) / span,
            sampler.cpuSeconds(CpuSampler.Group.CLIENTS, from, to) / span};
    }

    void connectStarted() {
        connectStart = System.nanoTime();
        sampler.mark();
    }

    void connected() {
        sampler.mark();
        connected = System.nanoTime();
    }

    /**
     * Fills the broker and client figures of {@code r}; the measured window runs from {@code windowFrom} to
     * {@code windowTo} ({@link System#nanoTime}; 0 when there was none) with {@code deliveries} measured deliveries.
     */
    void finish(ModeResult r, long windowFrom, long windowTo, long deliveries) {
        sampler.mark();
        long end = System.nanoTime();
        long split = connected < 0 ? end : connected;
        int subscribed = r.connect == null ? 0 : r.connect.connected;
        boolean window = windowFrom > 0 && windowTo > windowFrom;
        if (window) {
            r.window = new ModeResult.Window();
            r.window.seconds = ResultCollector.centiseconds((windowTo - windowFrom) / 1e9);
            r.window.deliveries = deliveries;
        }
        if (sampler.measuresBroker()) {
            ModeResult.BrokerUsage b = new ModeResult.BrokerUsage();
            b.pid = brokerPid;
            b.freshBroker = freshBroker;
            b.cpuSecondsConnect = cpu(CpuSampler.Group.BROKER, connectStart, split);
            b.cpuSecondsRun = cpu(CpuSampler.Group.BROKER, split, end);
            b.cpuSeconds = ResultCollector.centiseconds(b.cpuSecondsConnect + b.cpuSecondsRun);
            b.cpuUsPerSubscribe = perUnit(sampler.cpuSeconds(CpuSampler.Group.BROKER, connectStart, split),
                    subscribed);
            if (window) {
                double w = sampler.cpuSeconds(CpuSampler.Group.BROKER, windowFrom, windowTo);
                b.cpuSecondsWindow = ResultCollector.centiseconds(w);
                b.cpuUsPerDelivery = perUnit(w, deliveries);
                b.minorPageFaultsWindow = sampler.brokerMinorFaults(windowFrom, windowTo);
                b.threadCpuSecondsWindow = byThread(sampler.threadSeconds(windowFrom, windowTo));
            }
            b.threadCpuSecondsConnect = byThread(sampler.threadSeconds(connectStart, split));
            b.idleCpuPerSecond = idle == null ? -1 : round3(idle[0]);
            b.connectedCpuPerSecond = busyIdle == null ? -1 : round3(busyIdle[0]);
            b.peakRssBytes = sampler.peakBrokerRss();
            b.lifetimePeakRssBytes = ProcStats.peakRssBytes(brokerPid);
            r.broker = b;
        }
        ModeResult.ClientUsage c = ResultCollector.client(r.client);
        c.cpuSecondsConnect = cpu(CpuSampler.Group.CLIENTS, connectStart, split);
        c.cpuSecondsRun = cpu(CpuSampler.Group.CLIENTS, split, end);
        c.cpuSeconds = ResultCollector.centiseconds(c.cpuSecondsConnect + c.cpuSecondsRun);
        if (window) {
            double w = sampler.cpuSeconds(CpuSampler.Group.CLIENTS, windowFrom, windowTo);
            c.cpuSecondsWindow = ResultCollector.centiseconds(w);
            c.cpuUsPerDelivery = perUnit(w, deliveries);
        }
        c.benchJvmCpuSeconds = cpu(CpuSampler.Group.BENCH, connectStart, end);
        if (window) {
            c.benchJvmCpuSecondsWindow = cpu(CpuSampler.Group.BENCH, windowFrom, windowTo);
        }
        c.idleCpuPerSecond = idle == null ? -1 : round3(idle[1]);
        c.connectedCpuPerSecond = busyIdle == null ? -1 : round3(busyIdle[1]);
        r.client = c;
        if (sampler.measuresMachine()) {
            r.machine = machine(r, windowFrom, windowTo, window, end);
            noteStolen(r);
        }
    }

    private static void noteStolen(ModeResult r) {
        ModeResult.MachineUsage m = r.machine;
        if (m.stolenCpuSecondsRun >= STOLEN_NOTE_SECONDS || m.peakStolenCpuPerSecond >= STOLEN_NOTE_PEAK) {
            r.notes.add(String.format(java.util.Locale.ROOT, "the machine's host stole %.2f CPU-s from it during"
                    + " this run (%.2f in the measured window; at most %.2f CPU-s in one second): its figures are the"
                    + " machine's as much as the broker's", m.stolenCpuSecondsRun, m.stolenCpuSecondsWindow,
                    m.peakStolenCpuPerSecond));
        }
    }

    /** The machine's figures: CPU of other processes in the window and CPU stolen by the host. */
    private ModeResult.MachineUsage machine(ModeResult r, long windowFrom, long windowTo, boolean window, long end) {
        ModeResult.MachineUsage m = new ModeResult.MachineUsage();
        if (window) {
            double all = sampler.cpuSeconds(CpuSampler.Group.MACHINE, windowFrom, windowTo);
            m.cpuSecondsWindow = ResultCollector.centiseconds(all);
            if (r.broker != null) {
                double ours = sampler.cpuSeconds(CpuSampler.Group.BROKER, windowFrom, windowTo)
                        + sampler.cpuSeconds(CpuSampler.Group.CLIENTS, windowFrom, windowTo)
                        + sampler.cpuSeconds(CpuSampler.Group.BENCH, windowFrom, windowTo);
                m.otherCpuSecondsWindow = ResultCollector.centiseconds(Math.max(0, all - ours));
            }
            m.stolenCpuSecondsWindow = cpu(CpuSampler.Group.STOLEN, windowFrom, windowTo);
        }
        m.stolenCpuSecondsRun = cpu(CpuSampler.Group.STOLEN, connectStart, end);
        m.peakStolenCpuPerSecond = round3(sampler.peakRate(CpuSampler.Group.STOLEN, connectStart, end,
                TimeUnit.SECONDS.toNanos(1)));
        return m;
    }

    /** CPU seconds of {@code g} between two {@link System#nanoTime} instants (a capacity step's window). */
    double cpuSeconds(CpuSampler.Group g, long from, long to) {
        sampler.mark();
        return sampler.cpuSeconds(g, from, to);
    }

    private double cpu(CpuSampler.Group g, long from, long to) {
        return ResultCollector.centiseconds(sampler.cpuSeconds(g, from, to));
    }

    /** The groups' figures by name, in {@link ThreadCpu}'s order, the ended threads' part last; null for null. */
    private static Map<String, Double> byThread(double[] seconds) {
        if (seconds == null) {
            return null;
        }
        Map<String, Double> m = new LinkedHashMap<>();
        for (int g = 0; g <= ThreadCpu.OTHER; g++) {
            m.put(ThreadCpu.name(g), ResultCollector.centiseconds(seconds[g]));
        }
        m.put(ENDED_THREADS, ResultCollector.centiseconds(seconds[ThreadCpu.OTHER + 1]));
        return m;
    }

    /** The name of the process's CPU that no group holds (threads that ended after their last reading). */
    static final String ENDED_THREADS = "threads that ended";

    private static double perUnit(double seconds, long units) {
        return units <= 0 ? 0 : Math.round(seconds * 1e6 / units * 100) / 100.0;
    }

    private static double round3(double v) {
        return Math.round(v * 1000) / 1000.0;
    }

    @Override
    public void close() {
        sampler.close();
    }
}
