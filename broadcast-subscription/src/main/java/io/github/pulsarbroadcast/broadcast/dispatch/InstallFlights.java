package io.github.pulsarbroadcast.broadcast.dispatch;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * At most one installation under way per key (topic and subscription): the many subscribes that arrive together after
 * a topic move wait for one load and adoption. A waiter looks again when the installation it waited for is over
 * ({@code again}: it may have failed, or been a stock one), except when that installation was refused in a way every
 * waiter would be ({@code shared}: not ready, the topic closing): then the waiter is refused the same way, at once.
 * Otherwise each waiter would run the refused installation again, one after another, each up to a metadata-store
 * timeout, while the store fails (a review, thirtieth session).
 *
 * <p>Threading: any thread; the map is concurrent, and an entry is removed before its future completes.
 */
final class InstallFlights {

    private final ConcurrentHashMap<String, CompletableFuture<Void>> running = new ConcurrentHashMap<>();
    private final Predicate<Throwable> shared;

    /** @param shared whether a refusal (the cause, unwrapped) is given to the waiters of the refused installation */
    InstallFlights(Predicate<Throwable> shared) {
        this.shared = shared;
    }

    /** Runs {@code once}, unless an installation of {@code key} is under way: then waits, and runs {@code again}. */
    CompletableFuture<Void> run(String key, Supplier<CompletableFuture<Void>> once,
                                Supplier<CompletableFuture<Void>> again) {
        CompletableFuture<Void> mine = new CompletableFuture<>();
        CompletableFuture<Void> other = running.putIfAbsent(key, mine);
        if (other != null) {
            return other.handle((v, e) -> e == null ? null : unwrap(e)).thenCompose(refusal ->
                    refusal != null && shared.test(refusal) ? CompletableFuture.failedFuture(refusal) : again.get());
        }
        CompletableFuture<Void> done;
        try {
            done = once.get();
        } catch (RuntimeException e) {
            // Never leave the entry behind: every later installation of the key would wait on it.
            done = CompletableFuture.failedFuture(e);
        }
        done.whenComplete((v, e) -> {
            running.remove(key, mine);
            if (e == null) {
                mine.complete(null);
            } else {
                mine.completeExceptionally(e);
            }
        });
        return done;
    }

    /** Installations under way. */
    int size() {
        return running.size();
    }

    private static Throwable unwrap(Throwable e) {
        return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    }
}
