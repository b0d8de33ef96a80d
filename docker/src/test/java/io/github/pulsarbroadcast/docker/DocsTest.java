package io.github.pulsarbroadcast.docker;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertTrue;

import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.testng.annotations.Test;

/**
 * conf/broadcast.conf and docs/install.md list exactly the plugin keys of docs/configuration.md, the reference, so
 * that a key added there cannot be forgotten here.
 */
@Test(groups = "unit")
public class DocsTest {

    /** A table row of a plugin key: | `broadcastX` | `default` or text | ... */
    private static final Pattern KEY_ROW = Pattern.compile("(?m)^\\|\\s*`(broadcast[A-Za-z0-9]*)`\\s*\\|([^|]*)\\|");
    private static final Pattern CONF_KEY = Pattern.compile("(?m)^(broadcast[A-Za-z0-9]*)=(.*)$");
    private static final Pattern COMMENTED_KEY = Pattern.compile("#[A-Za-z0-9_.-]+=.*");

    public void broadcastConfHasEveryPluginKey() {
        Map<String, String> reference = keys(Build.read(Build.docs().resolve("configuration.md")));
        assertFalse(reference.isEmpty(), "no plugin keys found in docs/configuration.md");
        String conf = Build.read(Build.dist().resolve("conf/broadcast.conf"));
        Map<String, String> inConf = new TreeMap<>();
        Matcher m = CONF_KEY.matcher(conf);
        while (m.find()) {
            inConf.put(m.group(1), m.group(2));
        }
        assertEquals(inConf.keySet(), reference.keySet(), "plugin keys of conf/broadcast.conf");
        assertEquals(inConf.get("broadcastEnabled"), "true");
        assertTrue(conf.contains("\nbrokerInterceptors=broadcast-subscription\n"), conf);
        assertTrue(conf.contains("\nbrokerInterceptorsDirectory=./interceptors\n"), conf);
        assertTrue(conf.contains("\nadditionalServlets=broadcast-consumers\n"), conf);
        assertTrue(conf.contains("\nadditionalServletDirectory=./interceptors\n"), conf);
        // The image's apply-config-from-env.py takes "#key=value" comments for keys: no other '=' in comments.
        for (String line : conf.split("\n")) {
            if (line.startsWith("#") && line.contains("=")) {
                assertTrue(COMMENTED_KEY.matcher(line).matches(), line);
            }
        }
    }

    public void installGuideHasEveryKeyWithItsDefault() {
        Map<String, String> reference = keys(Build.read(Build.docs().resolve("configuration.md")));
        Map<String, String> guide = keys(Build.read(Build.docs().resolve("install.md")));
        assertEquals(guide, reference, "plugin keys and defaults of docs/install.md");
        String text = Build.read(Build.docs().resolve("install.md"));
        for (String key : new String[] {"brokerInterceptors", "brokerInterceptorsDirectory", "additionalServlets",
            "additionalServletDirectory"}) {
            assertTrue(text.contains("| `" + key + "` |"), key);
        }
        assertTrue(text.contains("pulsar.subscription.mode=broadcast"));
        assertTrue(text.contains("pulsar-broadcast installed its connection handler"));
    }

    private static Map<String, String> keys(String markdown) {
        Map<String, String> keys = new TreeMap<>();
        Matcher m = KEY_ROW.matcher(markdown);
        while (m.find()) {
            keys.put(m.group(1), m.group(2).trim());
        }
        return keys;
    }
}
