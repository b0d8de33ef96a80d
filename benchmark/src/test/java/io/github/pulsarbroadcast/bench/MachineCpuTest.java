package io.github.pulsarbroadcast.bench;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertNotNull;
import static org.testng.Assert.assertNull;
import static org.testng.Assert.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.testng.SkipException;
import org.testng.annotations.Test;

/**
 * The machine's CPU in the report: {@code /proc/stat}'s aggregate line read into busy and stolen seconds
 * ({@link ProcStats#parseMachineCpu}), and the highest rate over any one-second span of the samples
 * ({@link CpuSampler#peakRate}), checked against a brute-force pass over random sample series.
 *
 * <p>Threading: the test thread only.
 */
@Test(groups = "unit")
public class MachineCpuTest {

    private static final long SECOND = 1_000_000_000L;

    @Test(timeOut = 10_000)
    public void readsBusyAndStolenTicks() {
        // user nice system idle iowait irq softirq steal guest guest_nice, in 1/100 s on Linux
        double[] cpu = ProcStats.parseMachineCpu("cpu  4039039 10 485759 8524701 10559 5 55144 23914 0 0");
        assertNotNull(cpu);
        double tick = ProcStats.parseMachineCpu("cpu  1 0 0 0 0 0 0 0")[0];
        assertEquals(cpu[0], (4039039 + 10 + 485759 + 5 + 55144) * tick, 1e-6, "idle and iowait are not busy");
        assertEquals(cpu[1], 23914 * tick, 1e-6);
    }

    @Test(timeOut = 10_000)
    public void refusesOtherLines() {
        assertNull(ProcStats.parseMachineCpu(null));
        assertNull(ProcStats.parseMachineCpu("cpu0 1 2 3 4 5 6 7 8"), "one core's line is not the machine's");
        assertNull(ProcStats.parseMachineCpu("cpu  1 2 3"), "older kernels without steal");
    }

    @Test(timeOut = 10_000)
    public void peakRateFindsTheBurst() {
        List<long[]> s = new ArrayList<>();
        long cpu = 0;
        for (int i = 0; i <= 50; i++) {
            // 200 ms samples; between 3.0 s and 4.0 s the counter climbs by 0.8 s, elsewhere by 0.01 s per sample
            cpu += i > 15 && i <= 20 ? 160_000 : 2_000;
            s.add(new long[] {i * SECOND / 5, cpu});
        }
        assertEquals(CpuSampler.peakRate(s, 0, 10 * SECOND, SECOND), 0.8, 1e-9);
        assertEquals(CpuSampler.peakRate(s, 5 * SECOND, 10 * SECOND, SECOND), 0.01, 1e-9, "the burst is outside");
        assertEquals(CpuSampler.peakRate(s, 0, SECOND / 2, SECOND), 0.0, "no full second in the range");
        assertEquals(CpuSampler.peakRate(List.of(), 0, SECOND, SECOND), 0.0);
    }

    @Test(timeOut = 30_000)
    public void peakRateMatchesABruteForcePass() {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        for (int round = 0; round < 2_000; round++) {
            List<long[]> s = new ArrayList<>();
            long t = random.nextInt(1000);
            long cpu = 0;
            int n = random.nextInt(30);
            for (int i = 0; i < n; i++) {
                t += 1 + random.nextInt(600_000_000);
                cpu += random.nextInt(2_000_000);
                s.add(new long[] {t, cpu});
            }
            long from = random.nextInt(2) == 0 ? 0 : random.nextInt((int) Math.min(Integer.MAX_VALUE, t + 1));
            long to = from + random.nextInt(Integer.MAX_VALUE);
            long slice = 1 + random.nextInt(1_500_000_000);
            assertEquals(CpuSampler.peakRate(s, from, to, slice), bruteForce(s, from, to, slice), 1e-9,
                    "seed " + seed + " round " + round);
        }
    }

    /**
     * Every pair (a, b) of samples inside [from, to] with b the first sample at least {@code slice} after a: the
     * reference the two-pointer pass must match.
     */
    private static double bruteForce(List<long[]> s, long from, long to, long slice) {
        double peak = 0;
        for (int i = 0; i < s.size(); i++) {
            if (s.get(i)[0] < from) {
                continue;
            }
            for (int j = i + 1; j < s.size(); j++) {
                if (s.get(j)[0] - s.get(i)[0] >= slice) {
                    if (s.get(j)[0] <= to) {
                        long[] a = s.get(i);
                        long[] b = s.get(j);
                        peak = Math.max(peak, (b[1] - a[1]) / 1e6 / ((b[0] - a[0]) / 1e9));
                    }
                    break;
                }
            }
        }
        return peak;
    }

    @Test(timeOut = 10_000)
    public void thisMachineReportsItsCpu() {
        double[] now = ProcStats.machineCpuSeconds();
        if (now == null) {
            throw new SkipException("no /proc/stat (not Linux): the report leaves the machine's columns empty");
        }
        assertTrue(now[0] > 0, "a running machine has been busy");
        assertTrue(now[1] >= 0);
    }
}
