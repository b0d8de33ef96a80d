package io.github.pulsarbroadcast.bench.core;

import static org.testng.Assert.assertEquals;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.util.BitSet;
import org.testng.annotations.Test;

/**
 * What a fleet process ships to the benchmark JVM arrives whole: a tracker's state, the latency histograms (added)
 * and the per-message fan-out (worst of both, counts added); missing pairs weigh on the tail.
 *
 * <p>Threading: the test thread only.
 */
@Test(groups = "unit")
public class TrackerShippingTest {

    @Test(timeOut = 10_000)
    public void aTrackerArrivesWithEverythingItCounted() throws Exception {
        ConsumerTracker sent = new ConsumerTracker(5, null, true);
        sent.connected(12, 3);
        for (int seq : new int[] {0, 1, 3, 2, 3}) {
            sent.onMessage(seq, 0);
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        sent.writeTo(new DataOutputStream(bytes));
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes.toByteArray()));
        assertEquals(in.readInt(), 5, "index first");
        ConsumerTracker got = new ConsumerTracker(5, "sub", true);
        got.readFrom(in);
        BitSet published = new BitSet();
        published.set(0, 5);
        assertEquals(got.settle(published), 4);
        assertEquals(got.duplicates(), 1);
        assertEquals(got.outOfOrder(), 1);
        assertEquals(got.receipts(), 5);
        assertEquals(got.connectedAtMs(), 12);
        assertEquals(got.subscribeMs(), 3);
        assertEquals(got.missing(published).stream().toArray(), new int[] {4});
    }

    @Test(timeOut = 10_000)
    public void histogramsAndFanOutAddUp() throws Exception {
        Deliveries a = new Deliveries(new ConsumerTracker[] {new ConsumerTracker(0, null, false)}, 0, 3);
        Deliveries b = new Deliveries(new ConsumerTracker[] {new ConsumerTracker(0, null, false)}, 0, 3);
        long now = System.nanoTime();
        a.onMessage(a.trackers()[0], 1, now, 1_000, now - 5_000_000, 990, 995);
        b.onMessage(b.trackers()[0], 1, now, 1_000, now - 9_000_000, 990, -1);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
        b.latency().writeTo(out);
        b.fanOut().writeTo(out);
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes.toByteArray()));
        a.latency().mergeFrom(in);
        a.fanOut().mergeFrom(in);
        assertEquals(a.latency().endToEnd().count, 2);
        assertEquals(a.latency().endToEnd().max, 9, "from the intended send time");
        assertEquals(a.latency().fromPublish().max, 10, "from the publish time");
        assertEquals(a.latency().brokerToConsumer().count, 1, "only one had a broker timestamp");
        assertEquals(a.fanOut().worstMs(1), 9);
        assertEquals(a.fanOut().meanMs(1), 7.0);
        a.latency().recordMissing(60_000, 2);
        assertEquals(a.latency().endToEnd().count, 4);
        assertEquals(a.latency().endToEnd().p99, 60_000, 0.1 * 60_000);
        assertEquals(a.latency().missingMinAgeMs(), 60_000);
    }
}
