package io.github.pulsarbroadcast.standalone;

import static org.awaitility.Awaitility.await;
import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.testng.annotations.BeforeMethod;
import org.testng.annotations.Test;

/**
 * The standalone's bounded stop: a close in time ends the command and never halts; a close that hangs is halted
 * after the limit with the stack that shows where it hangs.
 *
 * <p>Threading: each test drives one hook thread; the output stream and the flag are thread-safe.
 */
public class StopHookTest {

    /** Set afresh before each test (TestNG runs the tests of one instance one after another). */
    private ByteArrayOutputStream bytes;
    private PrintStream out;
    private AtomicBoolean halted;

    @BeforeMethod(alwaysRun = true)
    public void freshOutput() {
        bytes = new ByteArrayOutputStream();
        out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        halted = new AtomicBoolean();
    }

    private String output() {
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Test(groups = "unit", timeOut = 30_000)
    public void aCloseInTimeLetsTheCommandEndAndNeverHalts() throws Exception {
        CountDownLatch stopped = new CountDownLatch(1);
        StopHook hook = new StopHook(() -> { }, stopped, out, Duration.ofMillis(300), Duration.ofMillis(300),
                () -> halted.set(true));
        hook.start();
        assertTrue(stopped.await(10, TimeUnit.SECONDS));
        hook.join(TimeUnit.SECONDS.toMillis(10));
        assertFalse(hook.isAlive());
        assertTrue(output().startsWith("Stopping pulsar-broadcast standalone..."), output());
        assertTrue(output().contains("Stopped in "), output());
        await().during(Duration.ofMillis(600)).atMost(Duration.ofSeconds(5)).until(() -> !halted.get());
        assertFalse(output().contains(StopHook.HALTING), output());
    }

    @Test(groups = "unit", timeOut = 30_000)
    public void aCloseThatHangsIsHaltedAfterTheLimitWithWhereItHangs() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch stopped = new CountDownLatch(1);
        StopHook hook = new StopHook(() -> hangInClose(release), stopped, out, Duration.ofMillis(300),
                Duration.ofMillis(300), () -> halted.set(true));
        try {
            hook.start();
            await().atMost(Duration.ofSeconds(10)).untilTrue(halted);
            String text = output();
            assertTrue(text.contains(StopHook.HALTING + " 0.3 s; halting"), text);
            String hookStack = text.substring(text.indexOf("\"standalone-shutdown\""));
            assertTrue(hookStack.substring(0, hookStack.indexOf("\n\n")).contains("hangInClose"), text);
            assertEquals(stopped.getCount(), 1L, "the command must not end before the close did");
        } finally {
            release.countDown();
            hook.join(TimeUnit.SECONDS.toMillis(10));
        }
        assertEquals(stopped.getCount(), 0L);
    }

    @Test(groups = "unit", timeOut = 30_000)
    public void aCloseThatFailsIsReportedAndStillEndsTheCommand() throws Exception {
        CountDownLatch stopped = new CountDownLatch(1);
        StopHook hook = new StopHook(() -> {
            throw new IllegalStateException("bookie would not stop");
        }, stopped, out, Duration.ofMillis(300), Duration.ofMillis(300),
                () -> halted.set(true));
        hook.start();
        assertTrue(stopped.await(10, TimeUnit.SECONDS));
        hook.join(TimeUnit.SECONDS.toMillis(10));
        assertTrue(output().contains("Stopping failed: java.lang.IllegalStateException: bookie would not stop"),
                output());
        await().during(Duration.ofMillis(600)).atMost(Duration.ofSeconds(5)).until(() -> !halted.get());
    }

    @Test(groups = "unit", timeOut = 30_000)
    public void aBlockedOutputDoesNotHoldTheHalt() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        PrintStream blocked = new PrintStream(new java.io.OutputStream() {
            @Override
            public void write(int b) throws java.io.IOException {
                try {
                    release.await(); // a terminal paused, a pipe nobody reads
                } catch (InterruptedException e) {
                    throw new java.io.InterruptedIOException();
                }
            }
        }, true, StandardCharsets.UTF_8);
        CountDownLatch stopped = new CountDownLatch(1);
        StopHook hook = new StopHook(() -> { }, stopped, blocked, Duration.ofMillis(300), Duration.ofMillis(300),
                () -> halted.set(true));
        try {
            hook.start();
            await().atMost(Duration.ofSeconds(10)).untilTrue(halted);
        } finally {
            release.countDown();
            hook.join(TimeUnit.SECONDS.toMillis(10));
        }
    }

    private static void hangInClose(CountDownLatch release) throws InterruptedException {
        release.await();
    }
}
