package io.github.pulsarbroadcast.broadcast.positions;

import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.apache.pulsar.metadata.api.MetadataStore;
import org.apache.pulsar.metadata.api.Notification;
import org.apache.pulsar.metadata.api.NotificationType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Removes a subscription's saved positions when its managed cursor is deleted anywhere in the cluster (unsubscribe,
 * subscription or topic deletion, inactive-topic clean-up): the metadata store tells every broker, and each removes
 * the positions under {@link PositionNodes#forCursorNode}. A notification can arrive after a subscription of
 * the same name was created again (a consumer that resubscribed at once): its cursor node then exists, and its
 * positions are left alone (an earlier subscription's head left behind is discarded by {@link
 * MetadataPositionStore#load}, which tells them apart by creation time). Deleting them would stop the new
 * subscription's saves on its broker.
 *
 * <p>Threading: stateless; {@link #accept} runs on the metadata store's notification thread and only starts
 * asynchronous operations.
 */
public final class CursorDeletions implements Consumer<Notification> {

    private static final Logger log = LoggerFactory.getLogger(CursorDeletions.class);

    private final MetadataStore store;

    public CursorDeletions(MetadataStore store) {
        this.store = store;
    }

    @Override
    public void accept(Notification n) {
        if (n.getType() != NotificationType.Deleted || PositionNodes.forCursorNode(n.getPath()) == null) {
            return;
        }
        cursorDeleted(n.getPath()).exceptionally(e -> {
            log.debug("Removing the saved positions of {} (cursor deleted): {}", n.getPath(), e.toString());
            return false;
        });
    }

    /**
     * After the cursor node at {@code cursorPath} was deleted: removes its saved positions unless the cursor exists
     * again. Completes with whether it removed them.
     */
    public CompletableFuture<Boolean> cursorDeleted(String cursorPath) {
        String ours = PositionNodes.forCursorNode(cursorPath);
        return store.exists(cursorPath).thenCompose(again -> again ? CompletableFuture.completedFuture(false)
                : store.exists(ours).thenCompose(saved -> !saved ? CompletableFuture.completedFuture(false)
                        : store.deleteRecursive(ours).thenApply(v -> {
                            log.info("Removed the saved broadcast consumer positions {}: the subscription's cursor"
                                    + " was deleted", ours);
                            return true;
                        })));
    }
}
