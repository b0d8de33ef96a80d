package io.github.pulsarbroadcast.broadcast;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertTrue;
import static org.testng.Assert.expectThrows;

import java.util.Properties;
import org.testng.annotations.Test;

public class BroadcastConfigTest {

    @Test(groups = "unit", timeOut = 10_000)
    public void defaultsApplyWhenNothingIsSet() {
        BroadcastConfig cfg = BroadcastConfig.from(new Properties());
        assertTrue(cfg.enabled());
        assertEquals(cfg.executorThreads(), Runtime.getRuntime().availableProcessors());
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void readsEveryKey() {
        Properties p = new Properties();
        p.setProperty("broadcastEnabled", " false ");
        p.setProperty("broadcastExecutorThreads", "3");
        // Every other key with a value of its own, none a default, so that one stored in another's field shows.
        String[][] values = {{"broadcastExecutorSlowTaskMs", "101"}, {"broadcastReconnectGraceSeconds", "102"},
            {"broadcastPositionSyncIntervalMs", "103"}, {"broadcastConsumerRetentionSeconds", "104"},
            {"broadcastMaxReadBatchSize", "105"}, {"broadcastWindowMaxEntries", "106"},
            {"broadcastWindowMaxBytes", "107"}, {"broadcastWindowBrokerMaxBytes", "108"},
            {"broadcastMarkDeleteIntervalMs", "109"}, {"broadcastStatsIntervalMs", "110"},
            {"broadcastMaxAckRangesPerConsumer", "111"}, {"broadcastMaxPendingAcksPerConnection", "112"},
            {"broadcastAcksOnEventLoop", "false"}, {"broadcastBusyNameWaitMs", "113"}};
        for (String[] kv : values) {
            p.setProperty(kv[0], kv[1]);
        }
        assertEquals(p.stringPropertyNames(), BroadcastConfig.keys(), "every key set");
        BroadcastConfig cfg = BroadcastConfig.from(p);
        assertFalse(cfg.enabled());
        assertEquals(cfg.executorThreads(), 3);
        assertEquals(cfg.executorSlowTaskMs(), 101);
        assertEquals(cfg.reconnectGraceSeconds(), 102);
        assertEquals(cfg.positionSyncIntervalMs(), 103);
        assertEquals(cfg.consumerRetentionSeconds(), 104);
        assertEquals(cfg.maxReadBatchSize(), 105);
        assertEquals(cfg.windowMaxEntries(), 106);
        assertEquals(cfg.windowMaxBytes(), 107);
        assertEquals(cfg.windowBrokerMaxBytes(), 108);
        assertEquals(cfg.markDeleteIntervalMs(), 109);
        assertEquals(cfg.statsIntervalMs(), 110);
        assertEquals(cfg.maxAckRangesPerConsumer(), 111);
        assertEquals(cfg.maxPendingAcksPerConnection(), 112);
        assertFalse(cfg.acksOnEventLoop());
        assertEquals(cfg.busyNameWaitMs(), 113);
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void badValueNamesKeyAndAllowedRange() {
        Properties p = new Properties();
        p.setProperty("broadcastExecutorThreads", "0");
        IllegalArgumentException e = expectThrows(IllegalArgumentException.class, () -> BroadcastConfig.from(p));
        assertTrue(e.getMessage().contains("broadcastExecutorThreads=0"), e.getMessage());
        assertTrue(e.getMessage().contains("from 1 to 1024"), e.getMessage());
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void typoUnderThePrefixIsRejected() {
        Properties p = new Properties();
        p.setProperty("broadcastExecutorThread", "2");
        IllegalArgumentException e = expectThrows(IllegalArgumentException.class, () -> BroadcastConfig.from(p));
        assertTrue(e.getMessage().contains("broadcastExecutorThread'"), e.getMessage());
    }

    /** docs/configuration.md documents exactly the keys this class reads, each with the default it applies. */
    @Test(groups = "unit", timeOut = 10_000)
    public void everyKeyIsDocumentedWithItsDefault() throws Exception {
        String doc = java.nio.file.Files.readString(java.nio.file.Path.of("..", "docs", "configuration.md"));
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^\\| `(broadcast\\w+)` \\| `?([^`|]*)`?")
                .matcher(doc);
        java.util.Map<String, String> documented = new java.util.LinkedHashMap<>();
        while (m.find()) {
            documented.put(m.group(1), m.group(2).trim());
        }
        assertEquals(documented.keySet(), BroadcastConfig.keys());
        BroadcastConfig defaults = BroadcastConfig.defaults();
        assertEquals(documented.get("broadcastEnabled"), String.valueOf(defaults.enabled()));
        assertEquals(documented.get("broadcastReconnectGraceSeconds"),
                String.valueOf(defaults.reconnectGraceSeconds()));
        assertEquals(documented.get("broadcastMaxReadBatchSize"), String.valueOf(defaults.maxReadBatchSize()));
        assertEquals(documented.get("broadcastWindowMaxEntries"), String.valueOf(defaults.windowMaxEntries()));
        assertEquals(documented.get("broadcastWindowMaxBytes"), String.valueOf(defaults.windowMaxBytes()));
        assertEquals(documented.get("broadcastWindowBrokerMaxBytes"), String.valueOf(defaults.windowBrokerMaxBytes()));
        assertEquals(documented.get("broadcastMaxAckRangesPerConsumer"),
                String.valueOf(defaults.maxAckRangesPerConsumer()));
        assertEquals(documented.get("broadcastMaxPendingAcksPerConnection"),
                String.valueOf(defaults.maxPendingAcksPerConnection()));
        assertEquals(documented.get("broadcastAcksOnEventLoop"), String.valueOf(defaults.acksOnEventLoop()));
        assertEquals(documented.get("broadcastMarkDeleteIntervalMs"),
                String.valueOf(defaults.markDeleteIntervalMs()));
        assertEquals(documented.get("broadcastStatsIntervalMs"), String.valueOf(defaults.statsIntervalMs()));
        assertEquals(documented.get("broadcastExecutorSlowTaskMs"), String.valueOf(defaults.executorSlowTaskMs()));
        assertEquals(documented.get("broadcastPositionSyncIntervalMs"),
                String.valueOf(defaults.positionSyncIntervalMs()));
        assertEquals(documented.get("broadcastConsumerRetentionSeconds"),
                String.valueOf(defaults.consumerRetentionSeconds()));
        assertEquals(documented.get("broadcastBusyNameWaitMs"), String.valueOf(defaults.busyNameWaitMs()));
        assertEquals(documented.get("broadcastExecutorThreads"), "number of CPU cores");
        assertEquals(defaults.executorThreads(), Runtime.getRuntime().availableProcessors());
    }

    /**
     * docs/configuration.md's "allowed" column is what the class enforces: for every numeric key its documented least
     * and greatest values are accepted, and one below and one above are refused with a message naming the key and the
     * range; the boolean keys say {@code `true`, `false`}.
     */
    @Test(groups = "unit", timeOut = 10_000)
    public void everyDocumentedRangeIsEnforcedAtBothEnds() throws Exception {
        String doc = java.nio.file.Files.readString(java.nio.file.Path.of("..", "docs", "configuration.md"));
        java.util.regex.Matcher m = java.util.regex.Pattern
                .compile("(?m)^\\| `(broadcast\\w+)` \\|[^|]*\\| ([^|]*?) \\|").matcher(doc);
        int numeric = 0;
        while (m.find()) {
            String key = m.group(1);
            String allowed = m.group(2);
            if (allowed.equals("`true`, `false`")) {
                continue;
            }
            java.util.regex.Matcher range = java.util.regex.Pattern.compile("(\\d+) to (\\d+|2\\^63-1)")
                    .matcher(allowed);
            assertTrue(range.matches(), key + ": allowed '" + allowed + "'");
            long min = Long.parseLong(range.group(1));
            long max = range.group(2).equals("2^63-1") ? Long.MAX_VALUE : Long.parseLong(range.group(2));
            String named = "from " + min + " to " + max;
            BroadcastConfig.from(props(key, Long.toString(min)));
            BroadcastConfig.from(props(key, Long.toString(max)));
            String below = Long.toString(min - 1);
            String above = max == Long.MAX_VALUE ? "9223372036854775808" : Long.toString(max + 1);
            for (String bad : new String[] {below, above}) {
                IllegalArgumentException e = expectThrows(IllegalArgumentException.class,
                        () -> BroadcastConfig.from(props(key, bad)));
                assertTrue(e.getMessage().contains(key + "=" + bad) && e.getMessage().contains(named),
                        e.getMessage());
            }
            numeric++;
        }
        assertEquals(numeric, BroadcastConfig.keys().size() - 2, "numeric keys checked (all but the two booleans)");
    }

    private static Properties props(String key, String value) {
        Properties p = new Properties();
        p.setProperty(key, value);
        return p;
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void booleanMustBeTrueOrFalse() {
        Properties p = new Properties();
        p.setProperty("broadcastEnabled", "yes");
        IllegalArgumentException e = expectThrows(IllegalArgumentException.class, () -> BroadcastConfig.from(p));
        assertTrue(e.getMessage().contains("use true or false"), e.getMessage());
    }
}
