package io.github.pulsarbroadcast.it;

import java.time.Duration;
import java.util.List;
import org.awaitility.Awaitility;

/**
 * The end of the topic as an {@link EquivalenceSchedule} compares it after each step, once both topics may have been
 * terminated: who is told, and not before it acknowledged everything.
 *
 * <p>Threading: the test thread only.
 */
final class EquivalenceEnds {

    private final EquivalenceSchedule s;

    EquivalenceEnds(EquivalenceSchedule schedule) {
        this.s = schedule;
    }

    /**
     * Before termination neither consumer of a pair is told the end of the topic; after it, a drained broadcast
     * consumer (it acknowledged everything its stock twin received, which is everything) must be told within 5 s.
     * Its stock twin is told too, except where stock stalls: a read that failed at the end stays registered in the
     * managed cursor ({@code ManagedCursorImpl.checkForNewEntries}), and stock's dispatcher silently stops reading on
     * the {@code ConcurrentWaitCallbackException} of its next read, so a consumer that subscribes again after that is
     * never told (seed 1179962357: "..., terminate, reset earliest, close car-1, everyone open"; the stock cursor
     * then held a waiting read, {@code hasPendingReadRequest()} true, checked once). That is printed, not failed.
     */
    void compare(EquivalenceSide.Car reference, EquivalenceSide.Car car) {
        String where = s.where();
        if (!s.terminated) {
            if (reference.consumer.hasReachedEndOfTopic() || car.consumer.hasReachedEndOfTopic()) {
                throw new AssertionError(where + car.name() + " was told the end of a topic not terminated");
            }
            return;
        }
        if (!within(car.consumer::hasReachedEndOfTopic)) {
            throw new AssertionError(where + "the broadcast " + car.name() + " was not told the end of the topic,"
                    + " though it acknowledged everything; the stock one " + (reference.consumer
                    .hasReachedEndOfTopic() ? "was" : "was not"));
        }
        car.toldEnd = true;
        if (!within(reference.consumer::hasReachedEndOfTopic)) {
            System.out.println("StockEquivalenceTest: " + where + "the stock " + car.name() + " was not told the end"
                    + " of the topic (stock's stall at the end), the broadcast one was");
        }
    }

    /**
     * A broadcast consumer is told the end of a terminated topic only once it acknowledged everything: one that has
     * messages still to receive ({@code expected}, what its stock twin just received), so not acknowledged, must not
     * have been told, unless this consumer object was told before they were replayed (the client's flag never
     * clears). Added in the thirty-third session: {@link #compare} saw only a missing tell, not an early one.
     */
    void checkNotToldEarly(EquivalenceSide.Car car, List<String> expected) {
        if (s.terminated && !expected.isEmpty() && !car.toldEnd && car.consumer.hasReachedEndOfTopic()) {
            throw new AssertionError(s.where() + "the broadcast " + car.name() + " was told the end of the topic"
                    + " before it received and acknowledged " + expected);
        }
    }

    private static boolean within(java.util.concurrent.Callable<Boolean> condition) {
        try {
            Awaitility.await().atMost(Duration.ofSeconds(5)).until(condition);
            return true;
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            return false;
        }
    }
}
