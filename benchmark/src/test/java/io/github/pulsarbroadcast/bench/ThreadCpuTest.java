package io.github.pulsarbroadcast.bench;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.awaitility.Awaitility;
import org.testng.SkipException;
import org.testng.annotations.Test;

/**
 * The broker's CPU by thread group ({@link ThreadCpu}): names sorted into their groups, {@code stat} lines parsed
 * whatever the thread's name holds, running totals that an ended thread does not lower, and a real reading of this
 * JVM's threads that agrees with the JVM's own count of one busy thread's CPU.
 *
 * <p>Threading: the test thread, and one spinning thread in {@link #aBusyThreadShowsInItsGroup}.
 */
@Test(groups = "unit")
public class ThreadCpuTest {

    @Test(timeOut = 10_000)
    public void namesGoToTheirGroups() {
        assertEquals(ThreadCpu.name(ThreadCpu.classify("pulsar-io-4-1")), "event loops");
        assertEquals(ThreadCpu.name(ThreadCpu.classify("floor-io-3-2")), "event loops", "the floor's compare");
        assertEquals(ThreadCpu.name(ThreadCpu.classify("broadcast-dispa")), "broadcast dispatch");
        assertEquals(ThreadCpu.name(ThreadCpu.classify("broadcast-posit")), "broadcast, other");
        assertEquals(ThreadCpu.name(ThreadCpu.classify("C2 CompilerThre")), "JIT compilers");
        assertEquals(ThreadCpu.name(ThreadCpu.classify("GC Thread#1")), "GC and VM");
        assertEquals(ThreadCpu.name(ThreadCpu.classify("pulsar-stats-up")), "stock stats and metrics");
        assertEquals(ThreadCpu.name(ThreadCpu.classify("metadata-store-")), "storage and metadata");
        assertEquals(ThreadCpu.name(ThreadCpu.classify("BookieJournal-3")), "storage and metadata");
        assertEquals(ThreadCpu.name(ThreadCpu.classify("pulsar-13-1")), "broker, other",
                "a pulsar thread no earlier group takes");
        assertEquals(ThreadCpu.classify("main"), ThreadCpu.OTHER);
        assertEquals(ThreadCpu.name(ThreadCpu.OTHER), ThreadCpu.OTHER_NAME);
    }

    @Test(timeOut = 10_000)
    public void parsesANameWithSpacesAndParentheses() {
        String stat = "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 100 0 0 0 1234 56 0 0 20 0 1 0 99 0 0 777\n";
        ProcStats.Stat parsed = ProcStats.Stat.of(stat);
        assertEquals(parsed.name, "a (b) c");
        assertEquals(parsed.ticks, 1234 + 56);
        assertEquals(parsed.startTicks, 99, "field 22");
        assertEquals(parsed.minorFaults, 100, "field 10");
        assertEquals(ProcStats.Stat.of("1 (x) R 0 0 0 0 0 0 0 0 0 0 5 6 0 0 0 0 0 0 42").startTicks, 42,
                "starttime as the last field read, with nothing after it");
    }

    /** Memory touched for the first time shows as minor page faults (at least one per 2 MiB, huge pages or not). */
    @Test(timeOut = 10_000)
    public void freshMemoryCountsAsMinorFaults() {
        long pid = ProcessHandle.current().pid();
        if (!ProcStats.available(pid)) {
            throw new SkipException("no /proc here");
        }
        long before = ProcStats.minorFaults(pid);
        java.nio.ByteBuffer fresh = java.nio.ByteBuffer.allocateDirect(32 << 20); // zeroed: every page touched
        long after = ProcStats.minorFaults(pid);
        assertTrue(before >= 0 && after - before >= 16,
                before + " -> " + after + " minor faults for " + fresh.capacity() + " fresh bytes");
    }

    @Test(timeOut = 10_000)
    public void interpolatesAnyColumn() {
        List<long[]> s = List.of(new long[] {0, 0, 100}, new long[] {1_000, 10, 300}, new long[] {2_000, 20, 300});
        assertEquals(CpuSampler.at(s, 500, 2), 200.0, 1e-9);
        assertEquals(CpuSampler.at(s, 1_500, 2), 300.0, 1e-9);
        assertEquals(CpuSampler.at(s, -5, 2), 100.0, 1e-9, "before the first sample: the first");
        assertEquals(CpuSampler.at(s, 9_999, 1), 20.0, 1e-9, "after the last: the last");
    }

    /**
     * Running totals: an ended thread keeps what it used in its group; a reused thread id (another start time) counts
     * as a new thread; a renamed thread takes only its growth to its new group.
     */
    @Test(timeOut = 10_000)
    public void totalsNeverGoBack() {
        ThreadCpu.Totals t = new ThreadCpu.Totals();
        t.beginReading();
        t.add(10, 7, 0, 1_000);
        t.add(11, 7, 1, 500);
        t.endReading();
        assertEquals(t.groups()[0], 1_000);
        t.beginReading();
        t.add(10, 7, 0, 1_600);
        t.endReading(); // thread 11 ended (not read): its group keeps its 500
        assertEquals(t.groups()[0], 1_600, "a thread's growth since the last reading");
        assertEquals(t.groups()[1], 500);
        t.beginReading();
        t.add(10, 7, 2, 1_700); // thread 10 renamed into another group: only its growth moves with it
        t.add(11, 9, 1, 200); // id 11 reused by a new thread (another start time)
        t.endReading();
        assertEquals(t.groups()[0], 1_600);
        assertEquals(t.groups()[2], 100);
        assertEquals(t.groups()[1], 700);
    }

    /**
     * A thread named as the plugin names its dispatch threads spins for a while; its group's CPU in a reading of this
     * JVM grows by what the JVM counts for that thread (within two clock ticks and the rest of the group, which is
     * empty here).
     */
    @Test(timeOut = 60_000)
    public void aBusyThreadShowsInItsGroup() throws Exception {
        long pid = ProcessHandle.current().pid();
        if (!ProcStats.available(pid)) {
            throw new SkipException("no /proc here");
        }
        int group = ThreadCpu.classify("broadcast-dispa");
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        AtomicBoolean stop = new AtomicBoolean();
        Thread busy = new Thread(() -> {
            long x = 0;
            while (!stop.get()) {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
            if (x == 42) {
                System.out.print("");
            }
        }, "broadcast-dispatch-test");
        ThreadCpu.Totals totals = new ThreadCpu.Totals();
        assertTrue(ThreadCpu.read(pid, totals));
        long[] before = totals.groups();
        // Spins on arithmetic (no system calls, which the kernel would count as system time in ticks of their own).
        busy.start();
        try {
            Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
                    .until(() -> mx.getThreadCpuTime(busy.getId()) > 400_000_000L);
            long jvmBefore = mx.getThreadCpuTime(busy.getId()) / 1_000;
            assertTrue(ThreadCpu.read(pid, totals));
            long[] after = totals.groups();
            long jvmAfter = mx.getThreadCpuTime(busy.getId()) / 1_000;
            long grew = after[group] - before[group];
            // /proc rounds user and system time down to clock ticks (10 ms each) and lags a running thread by up to
            // a scheduler tick: allow 50 ms below the JVM's bracket, 20 ms above
            assertTrue(grew >= jvmBefore - 50_000 && grew <= jvmAfter + 20_000, "the dispatch group grew by " + grew
                    + " us, the busy thread used " + jvmBefore + " to " + jvmAfter + " us");
        } finally {
            stop.set(true);
            busy.join(10_000);
        }
    }
}
