package io.github.pulsarbroadcast.broadcast.dispatch;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertSame;
import static org.testng.Assert.assertTrue;
import static org.testng.Assert.expectThrows;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pulsar.broker.service.BrokerServiceException.ServiceUnitNotReadyException;
import org.apache.pulsar.broker.service.BrokerServiceException.SubscriptionBusyException;
import org.testng.annotations.BeforeMethod;
import org.testng.annotations.Test;

/**
 * {@link InstallFlights}: one installation under way per key; waiters look again when it is over, except after a
 * refusal every waiter would get (not ready, the topic closing), which they get at once. Regression (thirtieth
 * session, a review): each waiter of a refused installation ran it again, one after another, each up to a metadata
 * timeout, while the metadata store failed.
 *
 * <p>Threading: TestNG's test thread only (the futures are completed by the test).
 */
public class InstallFlightsTest {

    private InstallFlights flights;

    /** TestNG runs every method on one instance: a fresh registry each. */
    @BeforeMethod(alwaysRun = true)
    public void fresh() {
        flights = new InstallFlights(e -> e instanceof ServiceUnitNotReadyException);
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void waitersOfARefusedInstallationGetItsRefusalWithoutRunningItAgain() {
        CompletableFuture<Void> first = new CompletableFuture<>();
        AtomicInteger again = new AtomicInteger();
        CompletableFuture<Void> owner = flights.run("t\0s", () -> first, () -> fail("the owner runs once"));
        CompletableFuture<Void> waiter = flights.run("t\0s", () -> fail("a waiter does not start its own"),
                () -> {
                    again.incrementAndGet();
                    return CompletableFuture.completedFuture(null);
                });
        ServiceUnitNotReadyException refusal = new ServiceUnitNotReadyException("not ready; retry");

        first.completeExceptionally(new CompletionException(refusal));

        assertSame(expectThrows(CompletionException.class, owner::join).getCause(), refusal);
        assertSame(expectThrows(CompletionException.class, waiter::join).getCause(), refusal);
        assertEquals(again.get(), 0, "the refused installation was not run again");
        assertEquals(flights.size(), 0);
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void waitersLookAgainAfterAnyOtherOutcome() {
        for (Throwable outcome : new Throwable[] {null, new SubscriptionBusyException("changing, retry")}) {
            CompletableFuture<Void> first = new CompletableFuture<>();
            AtomicInteger again = new AtomicInteger();
            flights.run("t\0s", () -> first, () -> fail("the owner runs once"));
            CompletableFuture<Void> waiter = flights.run("t\0s", () -> fail("a waiter does not start its own"),
                    () -> {
                        again.incrementAndGet();
                        return CompletableFuture.completedFuture(null);
                    });
            if (outcome == null) {
                first.complete(null);
            } else {
                first.completeExceptionally(outcome);
            }
            waiter.join();
            assertEquals(again.get(), 1, "after " + outcome);
            assertEquals(flights.size(), 0);
        }
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void anInstallationThatThrowsLeavesNoEntryBehind() {
        CompletableFuture<Void> thrown = flights.run("t\0s", () -> {
            throw new IllegalStateException("simulated");
        }, () -> fail("no waiter"));
        assertTrue(expectThrows(CompletionException.class, thrown::join).getCause() instanceof IllegalStateException);
        assertEquals(flights.size(), 0);
        CompletableFuture<Void> next = new CompletableFuture<>();
        assertSame(flights.run("t\0s", () -> next, () -> fail("not a waiter")), next, "the next one runs");
        next.complete(null);
        assertEquals(flights.size(), 0);
    }

    private static CompletableFuture<Void> fail(String why) {
        throw new AssertionError(why);
    }
}
