package io.github.pulsarbroadcast.bench;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertNull;

import io.github.pulsarbroadcast.bench.core.FanOut;
import java.util.BitSet;
import java.util.List;
import org.testng.annotations.Test;

/**
 * {@link StepDown}: messages sliced by their due time, the level to return to, and when the slices returned to it.
 *
 * <p>Threading: TestNG's test thread only.
 */
public class StepDownTest {

    private static final long SECOND = 1_000_000_000L;

    @Test(groups = "unit", timeOut = 10_000)
    public void levelIsTwentyPercentAboveTheEarlierP99ButAtLeastFiftyMilliseconds() {
        assertEquals(StepDown.level(1_000), 1_200);
        assertEquals(StepDown.level(100), 150);
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void slicesAreTheP99OfTheWorstFanOutOfTheMessagesDueInEachFiveSeconds() {
        // Ten messages, one a second from seq 3: the first five 900 ms at their slowest consumer, the next five 100.
        FanOut fanOut = new FanOut(20);
        BitSet published = new BitSet();
        for (int i = 0; i < 10; i++) {
            fanOut.record(3 + i, i < 5 ? 900 : 100);
            fanOut.record(3 + i, 10);
            published.set(3 + i);
        }
        List<long[]> slices = StepDown.slices(fanOut, seq -> (seq - 3) * SECOND, published, 3, 10);
        assertEquals(slices.size(), 2);
        assertEquals(slices.get(0)[0], 0);
        assertEquals(slices.get(0)[1], 900, 10);
        assertEquals(slices.get(1)[0], 5);
        assertEquals(slices.get(1)[1], 100, 1);
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void aMessageNoConsumerGotCountsAsTheSlowestAndOneNotPublishedNotAtAll() {
        FanOut fanOut = new FanOut(4);
        BitSet published = new BitSet();
        published.set(0, 2);
        fanOut.record(0, 50);
        // seq 1 published but never received; seq 2 not published (and never received)
        List<long[]> slices = StepDown.slices(fanOut, seq -> 0, published, 0, 3);
        assertEquals(slices.size(), 1);
        assertEquals(StepDown.recoveredAfter(slices, 1_000), null);
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void recoveredFromTheFirstSliceAfterWhichNoneIsAboveTheLevel() {
        List<long[]> slices = List.of(new long[] {0, 5_000}, new long[] {5, 300}, new long[] {10, 2_000},
                new long[] {15, 400}, new long[] {20, 450});
        assertEquals(StepDown.recoveredAfter(slices, 500), Long.valueOf(15));
        assertNull(StepDown.recoveredAfter(List.of(new long[] {0, 100}, new long[] {5, 900}), 500));
        assertEquals(StepDown.recoveredAfter(List.of(new long[] {0, 100}), 500), Long.valueOf(0));
    }
}
