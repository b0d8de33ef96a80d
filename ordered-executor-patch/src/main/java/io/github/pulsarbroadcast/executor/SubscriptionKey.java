package io.github.pulsarbroadcast.executor;

import java.util.Objects;

/**
 * The ordering key of {@link SubscriptionOrderedExecutor}: one subscription of one topic.
 *
 * <p>Two keys are equal iff both their topic and their subscription are equal; {@link #toString()} is only for
 * people ({@code "a/b" + "c"} and {@code "a" + "b/c"} print alike but are different keys).
 *
 * <p><b>Threading model.</b> Immutable: every field is final and set in the constructor, so instances may be
 * shared between threads without synchronization. The hash code is computed once, in the constructor, and mixed
 * (MurmurHash3's 32-bit finalizer) so that keys differing only in a trailing character, such as
 * {@code sub-1} and {@code sub-2}, still spread over the executor's threads.
 */
public final class SubscriptionKey {

    /** Immutable. */
    private final String topic;
    /** Immutable. */
    private final String subscription;
    /** Immutable; computed once from {@link #topic} and {@link #subscription}. */
    private final int hash;

    private SubscriptionKey(String topic, String subscription) {
        this.topic = Objects.requireNonNull(topic, "topic");
        this.subscription = Objects.requireNonNull(subscription, "subscription");
        this.hash = mix(31 * topic.hashCode() + subscription.hashCode());
    }

    /**
     * Returns the key of {@code subscription} on {@code topic}.
     *
     * @param topic the full topic name, e.g. {@code persistent://public/default/prices}; not null
     * @param subscription the subscription name; not null
     * @return the key
     * @throws NullPointerException if either argument is null
     */
    public static SubscriptionKey of(String topic, String subscription) {
        return new SubscriptionKey(topic, subscription);
    }

    /**
     * Returns the topic name.
     *
     * @return the topic name given to {@link #of(String, String)}
     */
    public String topic() {
        return topic;
    }

    /**
     * Returns the subscription name.
     *
     * @return the subscription name given to {@link #of(String, String)}
     */
    public String subscription() {
        return subscription;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof SubscriptionKey)) {
            return false;
        }
        SubscriptionKey other = (SubscriptionKey) o;
        return hash == other.hash && topic.equals(other.topic) && subscription.equals(other.subscription);
    }

    @Override
    public int hashCode() {
        return hash;
    }

    /**
     * Returns {@code topic + "/" + subscription}.
     *
     * @return a readable form for logs and error messages
     */
    @Override
    public String toString() {
        return topic + "/" + subscription;
    }

    /** MurmurHash3 fmix32: every input bit affects every output bit, so low bits (used by modulo) vary. */
    private static int mix(int h) {
        h ^= h >>> 16;
        h *= 0x85ebca6b;
        h ^= h >>> 13;
        h *= 0xc2b2ae35;
        h ^= h >>> 16;
        return h;
    }
}
