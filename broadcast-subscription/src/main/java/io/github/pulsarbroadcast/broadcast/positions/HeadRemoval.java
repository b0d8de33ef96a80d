package io.github.pulsarbroadcast.broadcast.positions;

import java.util.concurrent.CompletableFuture;
import org.apache.pulsar.common.util.FutureUtil;
import org.apache.pulsar.metadata.api.GetResult;
import org.apache.pulsar.metadata.api.MetadataStore;
import org.apache.pulsar.metadata.api.MetadataStoreException.NotFoundException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deleting a subscription's saved positions (the head and its chunks) from the metadata store.
 *
 * <p>Threading: static functions; each only starts asynchronous operations.
 */
final class HeadRemoval {

    private static final Logger log = LoggerFactory.getLogger(HeadRemoval.class);

    private HeadRemoval() {
    }

    /**
     * Deletes the head at {@code path} and its chunks unless another writer's head is there: a subscription of the
     * same name created since (a device that resubscribed at once, while this deletion waited behind a save) has
     * written its own, which must stay (regression, twenty-seventh session). A head {@code writerId} never wrote is
     * left to {@link CursorDeletions}, which removes it once the cursor is gone. A new subscription's head created
     * between the read and the deletion is still deleted; its store writes it again at its next save ({@code
     * MetadataPositionStore#headGone}), on a metadata store that keeps creation times (ZooKeeper does; Pulsar
     * 2.10's etcd store reports 0, and that store then stops saving as before the fix).
     */
    static CompletableFuture<Void> deleteOwn(MetadataStore store, String path, long writerId, String logName) {
        return store.get(path).thenCompose(head -> {
            byte[] bytes = head.map(GetResult::getValue).orElse(null);
            if (bytes != null && bytes.length >= PositionHead.BYTES && PositionHead.rawWriter(bytes) != writerId) {
                log.info("{} Saved consumer positions left in place: they are another writer's (a subscription of the"
                        + " same name created since, or a new owner)", logName);
                return CompletableFuture.completedFuture(null);
            }
            return bytes == null ? CompletableFuture.completedFuture(null) : deleteAll(store, path);
        });
    }

    /** Deletes the head at {@code path} and its chunks; nothing there is fine. */
    static CompletableFuture<Void> deleteAll(MetadataStore store, String path) {
        return store.deleteRecursive(path).handle((v, e) -> {
            if (e == null || notFound(e)) {
                return null;
            }
            throw FutureUtil.wrapToCompletionException(e);
        });
    }

    /** Whether {@code e} (or a cause) says the node does not exist (ZooKeeper's deleteRecursive: NoNode). */
    private static boolean notFound(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof NotFoundException || t instanceof org.apache.zookeeper.KeeperException.NoNodeException) {
                return true;
            }
        }
        return false;
    }
}
