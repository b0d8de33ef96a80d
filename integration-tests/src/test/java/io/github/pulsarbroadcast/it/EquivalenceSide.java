package io.github.pulsarbroadcast.it;

import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastConsumer;
import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastSubscription;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.ConsumerBuilder;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionType;

/**
 * One side of {@link StockEquivalenceTest}'s comparison: a topic, its producer and its consumers ({@link Car}), on
 * the stock side each consumer with a Failover subscription of its own, on the broadcast side all of them in one
 * broadcast subscription.
 *
 * <p>Threading: the test thread only.
 */
final class EquivalenceSide {

    final String topic;
    final boolean broadcast;
    final List<MessageId> ids = new ArrayList<>();
    final List<Long> publishTimes = new ArrayList<>();
    final List<Car> cars = new ArrayList<>();
    final Producer<String> producer;
    private final BroadcastTestBase test;

    EquivalenceSide(BroadcastTestBase test, String topic, boolean broadcast, int consumers) throws Exception {
        this.test = test;
        this.topic = topic;
        this.broadcast = broadcast;
        producer = test.closeAfterTest(test.client.newProducer(Schema.STRING).topic(topic).enableBatching(false)
                .create());
        for (int i = 0; i < consumers; i++) {
            Car car = new Car(this, i);
            car.open();
            cars.add(car);
        }
    }

    /** The subscriptions an admin call on "the subscription" is made on. */
    List<String> subscriptions() {
        List<String> names = new ArrayList<>();
        for (Car car : cars) {
            if (!names.contains(car.subscription())) {
                names.add(car.subscription());
            }
        }
        return names;
    }

    /** One consumer (a device) on one side, and where it is. */
    static final class Car {
        final EquivalenceSide side;
        final int index;
        Consumer<String> consumer;
        PositionImpl lastReceived;
        /**
         * Whether this consumer object was seen told the end of the topic ({@code EquivalenceEnds#compare});
         * a new object starts untold. The Java client never clears its own flag, so a tell seen once stays true.
         */
        boolean toldEnd;

        Car(EquivalenceSide side, int index) {
            this.side = side;
            this.index = index;
        }

        String subscription() {
            return side.broadcast ? "fleet" : "fleet-" + index;
        }

        String name() {
            return "car-" + index;
        }

        void open() throws Exception {
            ConsumerBuilder<String> builder = side.test.client.newConsumer(Schema.STRING).topic(side.topic)
                    .subscriptionName(subscription()).consumerName(name())
                    .acknowledgmentGroupTime(0, TimeUnit.MILLISECONDS)
                    .negativeAckRedeliveryDelay(100, TimeUnit.MILLISECONDS);
            consumer = (side.broadcast ? Broadcast.configure(builder)
                    : builder.subscriptionType(SubscriptionType.Failover)).subscribe();
            toldEnd = false;
            if (side.broadcast
                    && !(side.test.brokerSubscription(side.topic, "fleet") instanceof BroadcastSubscription)) {
                throw new AssertionError("the broadcast side is served as "
                        + side.test.brokerSubscription(side.topic, "fleet"));
            }
        }

        void close() throws Exception {
            consumer.close();
            consumer = null;
        }

        Message<String> next(long timeoutMs) throws Exception {
            Message<String> m = consumer.receive((int) timeoutMs, TimeUnit.MILLISECONDS);
            if (m != null) {
                consumer.acknowledge(m);
                lastReceived = BroadcastReconnectTest.position(m);
            }
            return m;
        }

        String describe() {
            return (side.broadcast ? "broadcast " : "stock ") + name() + " received up to " + lastReceived
                    + ", acknowledged up to " + acknowledged();
        }

        /**
         * Where the broker has the consumer's acknowledgements: the managed cursor's mark-delete position for stock,
         * the consumer's own position for broadcast (the managed cursor's may be held lower, by a recovery window or
         * another consumer).
         */
        PositionImpl acknowledged() {
            if (!side.broadcast) {
                return (PositionImpl) side.test.brokerSubscription(side.topic, subscription()).getCursor()
                        .getMarkDeletedPosition();
            }
            org.apache.pulsar.broker.service.Consumer c = side.test.brokerSubscription(side.topic, "fleet")
                    .getConsumers().stream().filter(x -> x.consumerName().equals(name())).findFirst().orElse(null);
            BroadcastConsumer bc = c == null ? null : side.test.dispatcher(side.topic, "fleet").member(c);
            return bc == null ? null : bc.cursor().acknowledged();
        }

        /** The broker has every acknowledgement of the messages received (before an unload). */
        boolean settled() {
            PositionImpl acknowledged = acknowledged();
            return lastReceived == null || acknowledged != null && acknowledged.compareTo(lastReceived) >= 0;
        }
    }
}
