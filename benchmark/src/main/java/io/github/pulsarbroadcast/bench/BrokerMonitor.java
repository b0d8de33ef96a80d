package io.github.pulsarbroadcast.bench;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Measures the broker process during one run: CPU seconds while connecting and while publishing, and the largest
 * resident set sampled every 200 ms.
 *
 * <p>Threading: the main thread calls {@link #start}, {@link #connected} and {@link #stop}; one daemon sampler
 * thread ("bench-broker-monitor") writes {@link #peakRss}, an atomic.
 */
final class BrokerMonitor implements AutoCloseable {

    private final long pid;
    private final boolean freshBroker;
    private final ScheduledExecutorService sampler;
    private final AtomicLong peakRss = new AtomicLong(-1);
    private double cpuAtStart;
    private double cpuAtConnected = -1;

    private BrokerMonitor(long pid, boolean freshBroker) {
        this.pid = pid;
        this.freshBroker = freshBroker;
        this.sampler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "bench-broker-monitor");
            t.setDaemon(true);
            return t;
        });
    }

    /** Starts measuring {@code pid}; returns null when its {@code /proc} entry cannot be read. */
    static BrokerMonitor start(Long pid, boolean freshBroker) {
        if (pid == null || !ProcStats.available(pid)) {
            return null;
        }
        BrokerMonitor m = new BrokerMonitor(pid, freshBroker);
        m.cpuAtStart = ProcStats.cpuSeconds(pid);
        m.sampler.scheduleAtFixedRate(m::sample, 0, 200, TimeUnit.MILLISECONDS);
        return m;
    }

    private void sample() {
        long rss = ProcStats.rssBytes(pid);
        peakRss.accumulateAndGet(rss, Math::max);
    }

    /** Marks the end of the connect phase. */
    void connected() {
        cpuAtConnected = ProcStats.cpuSeconds(pid);
    }

    /** Stops sampling and returns the figures. */
    ModeResult.BrokerUsage stop() {
        sample();
        sampler.shutdownNow();
        double end = ProcStats.cpuSeconds(pid);
        if (end < 0) {
            return null; // the process is gone
        }
        ModeResult.BrokerUsage u = new ModeResult.BrokerUsage();
        u.pid = pid;
        u.freshBroker = freshBroker;
        double connectedAt = cpuAtConnected < 0 ? end : cpuAtConnected;
        u.cpuSecondsConnect = ResultCollector.centiseconds(connectedAt - cpuAtStart);
        u.cpuSecondsRun = ResultCollector.centiseconds(end - connectedAt);
        u.cpuSeconds = ResultCollector.centiseconds(end - cpuAtStart);
        u.peakRssBytes = peakRss.get();
        u.lifetimePeakRssBytes = ProcStats.peakRssBytes(pid);
        return u;
    }

    @Override
    public void close() {
        sampler.shutdownNow();
    }
}
