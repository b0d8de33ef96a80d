package io.github.pulsarbroadcast.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What the report says about the machine: cores, memory, CPU model (from {@code /proc} where there is one), OS,
 * JDK and the benchmark JVM's heap limit.
 *
 * <p>Threading: stateless; any thread.
 */
final class Machine {

    private Machine() {
    }

    static Map<String, Object> describe() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("cores", Runtime.getRuntime().availableProcessors());
        m.put("memoryBytes", memoryBytes());
        m.put("cpuModel", cpuModel());
        m.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                + System.getProperty("os.arch"));
        m.put("java", System.getProperty("java.vendor") + " " + System.getProperty("java.runtime.version"));
        m.put("benchHeapMaxBytes", Runtime.getRuntime().maxMemory());
        return m;
    }

    static String summary() {
        long mem = memoryBytes();
        return String.format(Locale.ROOT, "%d cores%s, %s memory, %s %s, JDK %s, benchmark JVM heap max %d MiB",
                Runtime.getRuntime().availableProcessors(), cpuModel().isEmpty() ? "" : " (" + cpuModel() + ")",
                mem < 0 ? "unknown" : String.format(Locale.ROOT, "%.1f GiB", mem / (1024.0 * 1024 * 1024)),
                System.getProperty("os.name"), System.getProperty("os.version"),
                System.getProperty("java.runtime.version"), Runtime.getRuntime().maxMemory() / (1024 * 1024));
    }

    private static long memoryBytes() {
        String kb = procValue("/proc/meminfo", "MemTotal:");
        return kb.isEmpty() ? -1 : Long.parseLong(kb.split("\\s+")[0]) * 1024;
    }

    private static String cpuModel() {
        return procValue("/proc/cpuinfo", "model name");
    }

    /** The value after the first ':' of the first line starting with {@code key}, or "". */
    private static String procValue(String file, String key) {
        try {
            List<String> lines = Files.readAllLines(Path.of(file), StandardCharsets.UTF_8);
            for (String line : lines) {
                if (line.startsWith(key)) {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux, or not readable
        }
        return "";
    }
}
