package io.github.pulsarbroadcast.bench.fleet;

import io.github.pulsarbroadcast.bench.core.Mode;
import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import io.netty.buffer.ByteBuf;
import java.util.Collections;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.apache.pulsar.common.api.proto.CommandSubscribe.SubType;
import org.apache.pulsar.common.api.proto.MessageIdData;
import org.apache.pulsar.common.protocol.Commands;

/**
 * How the consumers of one mode subscribe, with the fields the stock Java client (2.10) sends for the same
 * configuration: broadcast and split use Failover with the subscription property and the consumer property
 * {@code pulsar.subscription.mode=broadcast} ({@code Broadcast.configure}); one subscription each, non-persistent and
 * floor use Exclusive; readers use an Exclusive non-durable subscription named {@code reader-<random>} starting at the
 * latest message, and acknowledge cumulatively (as {@code ReaderImpl} does). Every consumer has a unique name.
 *
 * <p>Threading: immutable after construction; any thread.
 */
final class Subscriber {

    private static final Map<String, String> BROADCAST = Map.of(Broadcast.KEY, Broadcast.VALUE);

    private final Mode mode;
    private final String topic;
    private final int subscriptions;
    private final int receiverQueue;
    private final boolean cumulative;
    private final String readerPrefix;

    Subscriber(FleetSpec spec) {
        this.mode = Mode.parse(spec.mode);
        this.topic = spec.topic;
        this.subscriptions = spec.subscriptions;
        this.receiverQueue = spec.receiverQueue;
        this.cumulative = spec.ackCumulative || mode == Mode.READERS;
        this.readerPrefix = String.format("reader-%06x", ThreadLocalRandom.current().nextInt(1 << 24));
    }

    int receiverQueue() {
        return receiverQueue;
    }

    /** Permits are sent once this many have accumulated: half the queue, as the stock client's refill threshold. */
    int refillThreshold() {
        return Math.max(1, receiverQueue / 2);
    }

    boolean cumulative() {
        return cumulative;
    }

    /** Whether a resubscribe starts from the last entry received (a reader), which the broker then sends again. */
    boolean resumesFromLastEntry() {
        return mode == Mode.READERS;
    }

    /**
     * The SUBSCRIBE command of consumer {@code index}; a reader that already received entry
     * ({@code lastLedger}, {@code lastEntry}) resumes from there.
     */
    ByteBuf subscribe(int index, long consumerId, long requestId, long lastLedger, long lastEntry) {
        boolean reader = mode == Mode.READERS;
        String subscription = reader ? readerPrefix + "-" + index : mode.subscription(index, subscriptions);
        String name = (reader ? "reader-" : "consumer-") + index;
        SubType type = mode.broadcast() ? SubType.Failover : SubType.Exclusive;
        Map<String, String> properties = mode.broadcast() ? BROADCAST : Collections.emptyMap();
        MessageIdData start = null;
        if (reader) {
            start = new MessageIdData().setLedgerId(lastLedger >= 0 ? lastLedger : Long.MAX_VALUE)
                    .setEntryId(lastLedger >= 0 ? lastEntry : Long.MAX_VALUE).setBatchIndex(-1);
        }
        return Commands.newSubscribe(topic, subscription, consumerId, requestId, type, 0, name, !reader, start,
                properties, false, false, InitialPosition.Latest, 0, null, true, null, properties, 0L);
    }
}
