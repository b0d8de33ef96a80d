package io.github.pulsarbroadcast.broadcast.positions;

import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * Whether this broker still owns a topic (serves it, or still holds its bundle while closing it), asked of the
 * broker, with what a failed or throwing question counts as said by the caller.
 *
 * <p>Threading: immutable; the supplier is called on the caller's thread.
 */
final class TopicOwnership {

    private final Supplier<CompletableFuture<Boolean>> ownsTopic;

    TopicOwnership(Supplier<CompletableFuture<Boolean>> ownsTopic) {
        this.ownsTopic = ownsTopic;
    }

    /** Whether this broker owns the topic; true when that cannot be told (as before ownership was asked). */
    CompletableFuture<Boolean> orUnknown() {
        return ask(true);
    }

    /** Whether this broker owns the topic; false when that cannot be told. */
    CompletableFuture<Boolean> forSure() {
        return ask(false);
    }

    private CompletableFuture<Boolean> ask(boolean unknown) {
        try {
            return ownsTopic.get().exceptionally(e -> unknown);
        } catch (RuntimeException e) {
            return CompletableFuture.completedFuture(unknown);
        }
    }
}
