package io.github.pulsarbroadcast.it;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Message;

/**
 * The steps of an {@link EquivalenceSchedule} that publish three messages and acknowledge them in one of several
 * ways on both sides: a negative acknowledgement over an acknowledgement hole, and cumulative acknowledgements alone
 * or mixed with individual and negative ones.
 *
 * <p>Threading: the test thread only.
 */
final class EquivalenceAcks {

    private final EquivalenceSchedule s;

    EquivalenceAcks(EquivalenceSchedule schedule) {
        this.s = schedule;
    }

    /**
     * Three messages; every connected consumer acknowledges the first and the third and negatively acknowledges
     * the second, which its client then asks to have again (for a Failover subscription the Java client asks for
     * everything unacknowledged: the broker rewinds, and skips what was acknowledged individually).
     */
    String publishWithANegativeAck() throws Exception {
        int first = s.published;
        String published = publishThreeAndAcknowledge((car, three) -> {
            car.consumer.acknowledge(three.get(0));
            car.consumer.negativeAcknowledge(three.get(1));
            car.consumer.acknowledge(three.get(2));
            return three.get(2);
        });
        return published + ", negative ack of m-" + (first + 1);
    }

    /**
     * Three messages, acknowledged cumulatively by every connected consumer in one of four ways, each of which
     * ends with all three acknowledged or asked for again (so that no hole stays open until the next
     * reconnect): the third cumulatively; the third individually, then the second cumulatively (a cumulative
     * acknowledgement below an individual one, which must absorb it); the second individually, then the third
     * cumulatively (over it); the second cumulatively and the third negatively (redelivered, then acknowledged
     * by the drain).
     */
    String publishWithCumulativeAcks() throws Exception {
        int first = s.published;
        int way = s.random.nextInt(4);
        String published = publishThreeAndAcknowledge((car, three) -> {
            switch (way) {
                case 0:
                    car.consumer.acknowledgeCumulative(three.get(2));
                    return three.get(2);
                case 1:
                    car.consumer.acknowledge(three.get(2));
                    car.consumer.acknowledgeCumulative(three.get(1));
                    return three.get(2);
                case 2:
                    car.consumer.acknowledge(three.get(1));
                    car.consumer.acknowledgeCumulative(three.get(2));
                    return three.get(2);
                default:
                    car.consumer.acknowledgeCumulative(three.get(1));
                    car.consumer.negativeAcknowledge(three.get(2));
                    return three.get(1);
            }
        });
        String m1 = "m-" + (first + 1);
        String m2 = "m-" + (first + 2);
        return published + ", " + new String[] {"cumulative ack of " + m2,
            "ack of " + m2 + " then cumulative ack of " + m1, "ack of " + m1 + " then cumulative ack of " + m2,
            "cumulative ack of " + m1 + " and negative ack of " + m2}[way];
    }

    /**
     * Publishes three messages; every connected consumer on both sides receives them (they must be the three)
     * and acknowledges them as {@code acknowledge} says, which returns the last message it acknowledged. Returns how
     * they were published.
     */
    private String publishThreeAndAcknowledge(Acknowledgement acknowledge) throws Exception {
        int first = s.published;
        String published = s.publish(3);
        List<String> expected = List.of("m-" + first, "m-" + (first + 1), "m-" + (first + 2));
        for (int i = 0; i < s.consumers; i++) {
            if (!s.isOpen(i)) {
                continue;
            }
            for (EquivalenceSide.Car car : List.of(s.stock.cars.get(i), s.broadcast.cars.get(i))) {
                List<Message<String>> three = new ArrayList<>();
                List<String> got = new ArrayList<>();
                for (int k = 0; k < 3; k++) {
                    Message<String> m = car.consumer.receive(10, TimeUnit.SECONDS);
                    if (m == null) {
                        break;
                    }
                    three.add(m);
                    got.add(m.getValue());
                }
                if (!got.equals(expected)) {
                    throw new AssertionError(s.where()
                            + (car.side.broadcast ? "broadcast " : "stock ") + car.name() + " received " + got
                            + " of the three to acknowledge, not " + expected);
                }
                car.lastReceived = BroadcastReconnectTest.position(acknowledge.apply(car, three));
            }
        }
        return published;
    }

    /** How a consumer acknowledges three messages it received; returns the last one it acknowledged. */
    private interface Acknowledgement {
        Message<String> apply(EquivalenceSide.Car car, List<Message<String>> three) throws Exception;
    }
}
