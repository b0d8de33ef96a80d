// Twenty-fifth session, experiment F10 (docs/benchmarks.md): what Deliveries.onMessage cost per message before F10,
// one thread, 100,000 trackers, 60 messages each in the fleet's order (every consumer gets a message in a row), and
// the trackers alone. Against the benchmark jar of 5502ee4:
//   ./mvnw -B -ntp -o -q -pl benchmark dependency:build-classpath -Dmdep.outputFile=/tmp/cp.txt
//   CP=$(cat /tmp/cp.txt):benchmark/target/benchmark-2.10.5.0-SNAPSHOT.jar
//   javac -d /tmp/rc -cp $CP docs/results/issue11-twentyfifth/RecordingCost.java
//   java -Xmx4g -cp $CP:/tmp/rc RecordingCost
// Printed on the AMD EPYC, 2026-11-27 09:10-09:11 UTC (before warm.sh of issue 12 started), twice (the first round of each is the JIT's):
//   onMessage 94.7 ns/msg, tracker only 24.2 ns/msg
//   onMessage 63.7 ns/msg, tracker only 10.3 ns/msg
//   onMessage 68.3 ns/msg, tracker only 8.6 ns/msg
//   onMessage 84.0 ns/msg, tracker only 23.5 ns/msg
//   onMessage 76.7 ns/msg, tracker only 11.6 ns/msg
//   onMessage 59.4 ns/msg, tracker only 7.9 ns/msg
import io.github.pulsarbroadcast.bench.core.ConsumerTracker;
import io.github.pulsarbroadcast.bench.core.Deliveries;

public class RecordingCost {
    public static void main(String[] args) {
        int consumers = 100_000;
        int msgs = 60;
        ConsumerTracker[] t = new ConsumerTracker[consumers];
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < consumers; i++) {
                t[i] = new ConsumerTracker(i, null, false);
            }
            Deliveries d = new Deliveries(t, 0, msgs * 3);
            long full = 0;
            long track = 0;
            for (int seq = 0; seq < msgs; seq++) {
                long now = System.nanoTime();
                long ms = System.currentTimeMillis();
                long t0 = System.nanoTime();
                for (int i = 0; i < consumers; i++) {
                    d.onMessage(t[i], seq, now, ms, now - 5_000_000, ms - 5, ms - 3);
                }
                full += System.nanoTime() - t0;
            }
            for (int i = 0; i < consumers; i++) {
                t[i] = new ConsumerTracker(i, null, false);
            }
            for (int seq = 0; seq < msgs; seq++) {
                long now = System.nanoTime();
                long t0 = System.nanoTime();
                for (int i = 0; i < consumers; i++) {
                    t[i].onMessage(seq, now);
                }
                track += System.nanoTime() - t0;
            }
            System.out.printf("onMessage %.1f ns/msg, tracker only %.1f ns/msg%n",
                    full / (double) consumers / msgs, track / (double) consumers / msgs);
        }
    }
}
