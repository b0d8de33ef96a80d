package io.github.pulsarbroadcast.standalone;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;

/**
 * The {@code --config} file of {@code standalone}: broker.conf-style {@code key=value} lines applied to the embedded
 * broker, except the keys this command sets itself. Those are refused, naming the key and the option to use: applied
 * over the command's own settings they silently broke it (a stock broker.conf's empty {@code brokerInterceptors=}
 * unloaded the plugin while the banner said it ran; its {@code bindAddress=0.0.0.0} beat {@code --bind-address}; a
 * {@code clusterName} other than the one {@code public/default} is created for; found by a read-only review,
 * forty-fourth session).
 *
 * <p>Threading: stateless; any thread.
 */
final class BrokerConfFile {

    /** Keys the command sets, and what to use instead. */
    private static final Map<String, String> OWNED = new LinkedHashMap<>();

    static {
        OWNED.put("clusterName", "the standalone's cluster is 'standalone'");
        for (String key : new String[] {"metadataStoreUrl", "configurationMetadataStoreUrl", "zookeeperServers",
            "configurationStoreServers", "globalZookeeperServers"}) {
            OWNED.put(key, "use --zookeeper-port");
        }
        OWNED.put("brokerServicePort", "use --port");
        OWNED.put("webServicePort", "use --web-port");
        OWNED.put("bindAddress", "use --bind-address");
        OWNED.put("advertisedAddress", "the standalone advertises 127.0.0.1");
        OWNED.put("narExtractionDirectory", "the standalone keeps it under --data-dir");
        for (String key : new String[] {"brokerInterceptors", "brokerInterceptorsDirectory", "additionalServlets",
            "additionalServletDirectory"}) {
            OWNED.put(key, "the standalone loads the plugin itself: use --interceptors-dir, or --no-plugin");
        }
    }

    private BrokerConfFile() {
    }

    /** The file's keys and values; {@link #problem} says first whether they may be used. */
    static Properties read(Path file) throws IOException {
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(file)) {
            p.load(in);
        }
        return p;
    }

    /** Why {@code file} cannot be used (the option, the file, the key, what to do), or null when it can. */
    static String problem(Path file) {
        if (!Files.isReadable(file)) {
            return "--config " + file + ": no such readable file (a broker.conf-style file of key=value lines)";
        }
        Properties p;
        try {
            p = read(file);
        } catch (IOException | IllegalArgumentException e) {
            return "--config " + file + ": cannot be read as key=value lines: " + e.getMessage();
        }
        for (Map.Entry<String, String> owned : OWNED.entrySet()) {
            if (p.containsKey(owned.getKey())) {
                return "--config " + file + ": key '" + owned.getKey() + "' is set by this command ("
                        + owned.getValue() + "); remove it from the file";
            }
        }
        return null;
    }
}
