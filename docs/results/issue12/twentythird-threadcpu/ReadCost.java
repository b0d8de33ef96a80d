// Twenty-third session: the CPU of one ThreadCpu reading (ProcStats.Stat parsing once, against HEAD~ of that change).
// Compile against benchmark/target/classes and its classpath.txt; run: java -cp OUT:CLASSES:CP io.github.pulsarbroadcast.bench.ReadCost
// (for 'before', put the old ProcStats and ThreadCpu classes first on the class path).
package io.github.pulsarbroadcast.bench;
import java.lang.management.*;
public class ReadCost { public static void main(String[] a) throws Exception {
  for (int i = 0; i < 140; i++) { Thread t = new Thread(() -> { try { Thread.sleep(600_000); } catch (InterruptedException e) {} }); t.setDaemon(true); t.setName("pulsar-io-" + i); t.start(); }
  long pid = ProcessHandle.current().pid();
  ThreadMXBean mx = ManagementFactory.getThreadMXBean();
  for (int round = 0; round < 5; round++) {
    ThreadCpu.Totals totals = new ThreadCpu.Totals();
    long c0 = mx.getCurrentThreadCpuTime();
    int n = 2000;
    for (int i = 0; i < n; i++) { totals.beginReading(); ThreadCpu.read(pid, totals); totals.endReading(); }
    long c1 = mx.getCurrentThreadCpuTime();
    System.out.printf("round %d: %.3f ms CPU per reading of %d threads%n", round, (c1 - c0) / 1e6 / n, Thread.activeCount());
  }
}}
