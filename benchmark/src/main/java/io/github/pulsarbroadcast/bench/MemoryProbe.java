package io.github.pulsarbroadcast.bench;

import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Memory figures that say more than a resident set (which mostly shows how far G1 grew the heap): heap in use right
 * after a full collection, and direct memory in use. For the broker JVM that this tool started: {@code jcmd <pid>
 * GC.run}, then the broker's own {@code /metrics} ({@code jvm_memory_bytes_used{area="heap"}},
 * {@code jvm_memory_direct_bytes_used}); for this JVM (the stock Java client's consumers): {@link System#gc} and the
 * memory beans.
 *
 * <p>Threading: stateless; the main thread calls it after a run's measured window (the collection it forces is not in
 * any figure).
 */
final class MemoryProbe {

    private MemoryProbe() {
    }

    /** Fills {@code b} for broker {@code pid} with its admin interface at {@code adminUrl}; notes failures there. */
    static void broker(ModeResult.BrokerUsage b, long pid, String adminUrl) {
        try {
            Process gc = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                    Long.toString(pid), "GC.run").redirectErrorStream(true).start();
            gc.getInputStream().readAllBytes();
            if (!gc.waitFor(60, TimeUnit.SECONDS)) {
                gc.destroyForcibly();
                return;
            }
            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(adminUrl + "/metrics/"))
                    .timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());
            b.heapUsedAfterGcBytes = metric(r.body(), "jvm_memory_bytes_used", "area=\"heap\"");
            b.directMemoryUsedBytes = metric(r.body(), "jvm_memory_direct_bytes_used", "");
        } catch (IOException e) {
            // no figures: the report shows none
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The value of the first Prometheus sample {@code name{labels} value} whose labels hold {@code label}, or -1. */
    static long metric(String text, String name, String label) {
        for (String line : text.split("\n")) {
            if ((line.startsWith(name + "{") || line.startsWith(name + " ")) && line.contains(label)) {
                String[] f = line.trim().split("\\s+");
                try {
                    return f.length < 2 ? -1 : (long) Double.parseDouble(f[1]);
                } catch (NumberFormatException e) {
                    return -1;
                }
            }
        }
        return -1;
    }

    /** Fills {@code c} with this JVM's heap after a full collection and its direct buffers in use. */
    static void thisJvm(ModeResult.ClientUsage c) {
        System.gc();
        c.heapUsedAfterGcBytes = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        long direct = 0;
        for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            if (pool.getName().equals("direct")) {
                direct += pool.getMemoryUsed();
            }
        }
        c.directMemoryUsedBytes = direct + Math.max(0, io.netty.util.internal.PlatformDependent.usedDirectMemory());
    }
}
