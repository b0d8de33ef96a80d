package io.github.pulsarbroadcast.executor;

/** Keys for tests. */
final class Keys {

    static final String TOPIC = "persistent://public/default/broadcast";

    private Keys() {
    }

    /** Returns a key of {@link #TOPIC} whose ordered thread is {@code threadIndex}. */
    static SubscriptionKey onThread(SubscriptionOrderedExecutor executor, int threadIndex) {
        for (int i = 0; i < 100_000; i++) {
            SubscriptionKey key = SubscriptionKey.of(TOPIC, "sub-" + i);
            if (executor.threadIndex(key) == threadIndex) {
                return key;
            }
        }
        throw new AssertionError("no key maps to thread " + threadIndex);
    }
}
