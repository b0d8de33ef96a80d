package io.github.pulsarbroadcast.broadcast.positions;

import org.apache.pulsar.metadata.api.MetadataStoreConfig;
import org.apache.pulsar.metadata.api.extended.MetadataStoreExtended;
import org.testng.annotations.AfterMethod;
import org.testng.annotations.BeforeMethod;

/**
 * A fresh Pulsar in-memory metadata store (the same API as ZooKeeper's) for each test method of the position-store
 * tests.
 *
 * <p>Threading: TestNG's test thread sets and clears {@link #metadata}; the store itself is thread-safe.
 */
abstract class InMemoryMetadata {

    protected MetadataStoreExtended metadata;

    @BeforeMethod(alwaysRun = true)
    public void open() throws Exception {
        metadata = MetadataStoreExtended.create("memory:local", MetadataStoreConfig.builder().build());
    }

    @AfterMethod(alwaysRun = true)
    public void close() throws Exception {
        if (metadata != null) {
            metadata.close();
        }
    }
}
