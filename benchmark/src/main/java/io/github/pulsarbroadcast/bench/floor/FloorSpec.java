package io.github.pulsarbroadcast.bench.floor;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;

/**
 * What the floor server sends: {@code totalMessages} messages of {@code messageSize} bytes at {@code rate} per second,
 * the first {@code warmupMessages} of them the warm-up. The benchmark JVM writes it as JSON; the floor JVM reads it.
 *
 * <p>Threading: filled by one thread, then only read.
 */
public final class FloorSpec {

    public int messageSize = 1024;
    public double rate = 1;
    public int totalMessages;
    public int warmupMessages;
    /** Netty event-loop threads. */
    public int ioThreads = 1;
    public int statusIntervalMs = 200;

    public static FloorSpec read(Path file) throws IOException {
        return new ObjectMapper().readValue(file.toFile(), FloorSpec.class);
    }

    public void write(Path file) throws IOException {
        new ObjectMapper().writerWithDefaultPrettyPrinter().writeValue(file.toFile(), this);
    }
}
