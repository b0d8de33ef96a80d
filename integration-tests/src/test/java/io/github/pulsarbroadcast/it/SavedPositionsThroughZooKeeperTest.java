package io.github.pulsarbroadcast.it;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;

import io.github.pulsarbroadcast.broadcast.positions.ChunkReads;
import io.github.pulsarbroadcast.broadcast.positions.MetadataPositionStore;
import io.github.pulsarbroadcast.broadcast.positions.PositionStore;
import io.github.pulsarbroadcast.broadcast.positions.SavedPosition;
import io.github.pulsarbroadcast.broadcast.positions.SnapshotCodec;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pulsar.metadata.api.extended.MetadataStoreExtended;
import org.apache.pulsar.metadata.api.extended.SessionEvent;
import org.testng.annotations.Test;

/**
 * Saved positions larger than ZooKeeper's 1 MiB packet limit, through the broker's own metadata store (Pulsar's batched
 * ZooKeeper store, as a broker uses it). Regression test of the topic move with 100,000 consumers (docs/benchmarks.md,
 * "Reconnect storm"): their 3.6 MB snapshot was read as chunks all at once, Pulsar's store batched the reads into one
 * ZooKeeper multi-read, its 3.6 MB response passed the client's limit ("Packet len 3642409 is out of range"), and the
 * broker's ZooKeeper connection dropped on every load, failing the load and everything else in flight.
 *
 * <p>Threading: TestNG's test thread; the session listener runs on the metadata store's thread (an atomic counter).
 */
public class SavedPositionsThroughZooKeeperTest extends BrokerTestBase {

    @Test(groups = "integration", timeOut = 180_000)
    public void aSnapshotOfSeveralMegabytesLoadsWithoutDroppingTheZooKeeperConnection() throws Exception {
        MetadataStoreExtended metadata = cluster.broker().getLocalMetadataStore();
        AtomicInteger connectionLosses = new AtomicInteger();
        metadata.registerSessionListener(event -> {
            if (event == SessionEvent.ConnectionLost) {
                connectionLosses.incrementAndGet();
            }
        });
        // Every consumer at its own position: no two share a group, so each costs about 22 bytes (5.6 MB in all).
        List<SavedPosition> positions = new ArrayList<>();
        for (int i = 0; i < 250_000; i++) {
            positions.add(new SavedPosition("vehicle-" + i, 7, 1_000 + i, null, 0));
        }
        int bytes = SnapshotCodec.encode(positions).length;
        assertTrue(bytes > 2 * 1024 * 1024, "the snapshot is several times ZooKeeper's limit: " + bytes + " bytes");

        MetadataPositionStore writer = store(metadata);
        writer.load().get(60, TimeUnit.SECONDS);
        writer.save(positions, null, true).get(60, TimeUnit.SECONDS);
        PositionStore.Loaded loaded = store(metadata).load().get(60, TimeUnit.SECONDS);

        assertEquals(loaded.positions.size(), positions.size(), "every position came back");
        assertTrue(loaded.savedOnClose);
        assertEquals(connectionLosses.get(), 0, "ZooKeeper connection losses while saving and loading " + bytes
                + " bytes");
        store(metadata).delete().get(60, TimeUnit.SECONDS);
    }

    private static MetadataPositionStore store(MetadataStoreExtended metadata) {
        return new MetadataPositionStore(metadata, "public/default/persistent/large-snapshot", "fleet",
                "[large-snapshot][fleet]", MetadataPositionStore.DEFAULT_CHUNK_BYTES, new ChunkReads());
    }
}
