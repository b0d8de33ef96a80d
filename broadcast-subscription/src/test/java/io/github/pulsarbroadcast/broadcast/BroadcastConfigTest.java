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
        BroadcastConfig cfg = BroadcastConfig.from(p);
        assertFalse(cfg.enabled());
        assertEquals(cfg.executorThreads(), 3);
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

    @Test(groups = "unit", timeOut = 10_000)
    public void booleanMustBeTrueOrFalse() {
        Properties p = new Properties();
        p.setProperty("broadcastEnabled", "yes");
        IllegalArgumentException e = expectThrows(IllegalArgumentException.class, () -> BroadcastConfig.from(p));
        assertTrue(e.getMessage().contains("use true or false"), e.getMessage());
    }
}
