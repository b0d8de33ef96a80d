package io.github.pulsarbroadcast.broadcast.dispatch;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.pulsar.common.util.FutureUtil;

/**
 * At most one installation under way per key (topic name and subscription): the many subscribes that arrive together
 * after a topic move wait for one load and adoption. A waiter looks again when the installation it waited for is over
 * ({@code again}: it may have failed, or been a stock one), except when that installation, for the same topic object
 * (a topic closed and loaded again here has the same name), failed in a way every such waiter would ({@code shared}):
 * then the waiter fails the same way, at once. Otherwise each waiter would run the failed installation again, one
 * after another, each up to a metadata-store timeout, while the store fails (a review, thirtieth session).
 *
 * <p>Threading: any thread; the map is concurrent, and an entry is removed before its future completes.
 */
final class InstallFlights {

    /** An installation under way: the topic object it is for, and its outcome. */
    private static final class Flight {
        final Object topic;
        final CompletableFuture<Void> done = new CompletableFuture<>();

        Flight(Object topic) {
            this.topic = topic;
        }
    }

    private final ConcurrentHashMap<String, Flight> running = new ConcurrentHashMap<>();
    private final Predicate<Throwable> shared;

    /** @param shared whether a failure (the cause, unwrapped) is given to the waiters of the failed installation */
    InstallFlights(Predicate<Throwable> shared) {
        this.shared = shared;
    }

    /**
     * Runs {@code once} for {@code topic}, unless an installation of {@code key} is under way: then waits, and runs
     * {@code again}.
     */
    CompletableFuture<Void> run(String key, Object topic, Supplier<CompletableFuture<Void>> once,
                                Supplier<CompletableFuture<Void>> again) {
        Flight mine = new Flight(topic);
        Flight other = running.putIfAbsent(key, mine);
        if (other != null) {
            return other.done.handle((v, e) -> e == null ? null : unwrap(e)).thenCompose(failure ->
                    failure != null && other.topic == topic && shared.test(failure)
                            ? CompletableFuture.failedFuture(failure) : again.get());
        }
        CompletableFuture<Void> done;
        try {
            done = once.get();
            if (done == null) {
                done = CompletableFuture.failedFuture(new IllegalStateException("no installation for " + key));
            }
        } catch (Throwable e) { // an Error too: never leave the entry behind, every later installation would wait
            done = CompletableFuture.failedFuture(e);
        }
        done.whenComplete((v, e) -> {
            running.remove(key, mine);
            if (e == null) {
                mine.done.complete(null);
            } else {
                mine.done.completeExceptionally(e);
            }
        });
        return done;
    }

    /** Installations under way. */
    int size() {
        return running.size();
    }

    private static Throwable unwrap(Throwable e) {
        return FutureUtil.unwrapCompletionException(e);
    }
}
