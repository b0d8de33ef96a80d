package io.github.pulsarbroadcast.it;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import org.testng.IInvokedMethod;
import org.testng.IInvokedMethodListener;
import org.testng.ITestResult;
import org.testng.internal.thread.ThreadTimeoutException;

/**
 * Prints every thread's stack when a test fails by time-out, so that a hang in CI can be read afterwards.
 *
 * <p>Threading: TestNG calls it on the test's thread; stateless.
 */
public final class ThreadDumpOnTimeout implements IInvokedMethodListener {

    @Override
    public void afterInvocation(IInvokedMethod method, ITestResult result) {
        if (result.getThrowable() instanceof ThreadTimeoutException) {
            StringBuilder dump = new StringBuilder("Thread dump after time-out of ")
                    .append(result.getTestClass().getName()).append('.').append(method.getTestMethod()
                            .getMethodName()).append(":\n");
            for (ThreadInfo info : ManagementFactory.getThreadMXBean().dumpAllThreads(true, true)) {
                dump.append(info);
            }
            System.err.println(dump);
        }
    }
}
