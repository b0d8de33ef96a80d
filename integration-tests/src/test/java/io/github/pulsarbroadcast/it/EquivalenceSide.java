package io.github.pulsarbroadcast.it;

import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastConsumer;
import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastSubscription;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
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
    /** Each consumer's receiver queue (its flow permits come from it). */
    final int receiverQueue;
    private final BroadcastTestBase test;

    /**
     * A side whose producer batches when {@code batched} (a batch is formed only by {@code sendAsync} and
     * {@code flush}: no delay or count closes one on its own, so both sides store the same batches).
     */
    EquivalenceSide(BroadcastTestBase test, String topic, boolean broadcast, int consumers, boolean batched,
                    int receiverQueue) throws Exception {
        this.test = test;
        this.topic = topic;
        this.broadcast = broadcast;
        this.receiverQueue = receiverQueue;
        producer = test.closeAfterTest(test.client.newProducer(Schema.STRING).topic(topic).enableBatching(batched)
                .batchingMaxPublishDelay(1, TimeUnit.HOURS).batchingMaxMessages(1_000)
                .batchingMaxBytes(1024 * 1024).create());
        for (int i = 0; i < consumers; i++) {
            Car car = new Car(this, i);
            car.open();
            cars.add(car);
        }
    }

    /**
     * Publishes {@code m-first} to {@code m-(first+k-1)} as one batch when {@code batched} (its publish time is then
     * the first message's; {@code k} is 1 otherwise), and records their ids and publish times.
     */
    void publish(int first, int k, boolean batched) throws Exception {
        // Stock resets by time to the first entry published after the time: one millisecond before this send names
        // this message, or the batch that holds it (the entry before it was published earlier).
        long before = System.currentTimeMillis() - 1;
        if (!batched) {
            assert k == 1 : k;
            publishTimes.add(before);
            ids.add(producer.send("m-" + first));
            return;
        }
        List<CompletableFuture<MessageId>> sends = new ArrayList<>();
        for (int i = 0; i < k; i++) {
            publishTimes.add(before);
            sends.add(producer.sendAsync("m-" + (first + i)));
        }
        producer.flush();
        for (CompletableFuture<MessageId> send : sends) {
            ids.add(send.get(10, TimeUnit.SECONDS));
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
                    .subscriptionName(subscription()).consumerName(name()).receiverQueueSize(side.receiverQueue)
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
