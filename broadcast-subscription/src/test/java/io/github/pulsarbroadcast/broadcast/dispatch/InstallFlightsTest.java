package io.github.pulsarbroadcast.broadcast.dispatch;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertSame;
import static org.testng.Assert.expectThrows;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pulsar.broker.service.BrokerServiceException.ServiceUnitNotReadyException;
import org.apache.pulsar.broker.service.BrokerServiceException.SubscriptionBusyException;
import org.apache.pulsar.broker.service.BrokerServiceException.SubscriptionNotFoundException;
import org.apache.pulsar.broker.service.BrokerServiceException.TopicFencedException;
import org.apache.pulsar.metadata.api.MetadataStoreException;
import org.testng.annotations.BeforeMethod;
import org.testng.annotations.Test;

/**
 * {@link InstallFlights} with the installer's own {@link SubscriptionInstaller#SHARED_FAILURES}: one installation under
 * way per key; waiters look again when it is over, except after a failure every waiter for the same topic object would
 * meet, which they get at once. Regression (thirtieth session, two reviews): each waiter of a failed installation ran
 * it again, one after another, each up to a metadata timeout, while the metadata store failed.
 *
 * <p>Threading: TestNG's test thread only (the futures are completed by the test).
 */
public class InstallFlightsTest {

    private static final Object TOPIC = new Object();
    private InstallFlights flights;
    private AtomicInteger again;

    /** TestNG runs every method on one instance: a fresh registry each. */
    @BeforeMethod(alwaysRun = true)
    public void fresh() {
        flights = new InstallFlights(SubscriptionInstaller.SHARED_FAILURES);
        again = new AtomicInteger();
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void waitersOfARefusedInstallationGetItsRefusalWithoutRunningItAgain() {
        for (Exception failure : new Exception[] {new ServiceUnitNotReadyException("not ready; retry"),
                new TopicFencedException("Topic is closing"), new MetadataStoreException("timeout")}) {
            CompletableFuture<Void> first = new CompletableFuture<>();
            CompletableFuture<Void> owner = flights.run("t\0s", TOPIC, () -> first, () -> fail("runs once"));
            CompletableFuture<Void> waiter = waiter(TOPIC);

            first.completeExceptionally(new CompletionException(failure));

            assertSame(expectThrows(CompletionException.class, owner::join).getCause(), failure);
            assertSame(expectThrows(CompletionException.class, waiter::join).getCause(), failure);
            assertEquals(again.get(), 0, "the failed installation was not run again: " + failure);
            assertEquals(flights.size(), 0);
        }
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void waitersLookAgainAfterAnyOtherOutcome() {
        for (Throwable outcome : new Throwable[] {null, new SubscriptionBusyException("in use"),
                new SubscriptionInstaller.SubscriptionChanging(),
                new SubscriptionNotFoundException("Subscription does not exist")}) {
            again.set(0);
            CompletableFuture<Void> first = new CompletableFuture<>();
            flights.run("t\0s", TOPIC, () -> first, () -> fail("runs once"));
            CompletableFuture<Void> waiter = waiter(TOPIC);
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

    /**
     * A review (thirtieth session): the installation of a topic closed meanwhile failed as closing, and the subscribes
     * to the same name's topic loaded again on this broker, which had waited for it, were refused as well.
     */
    @Test(groups = "unit", timeOut = 10_000)
    public void waitersForAnotherTopicObjectOfTheSameNameLookAgain() {
        CompletableFuture<Void> first = new CompletableFuture<>();
        flights.run("t\0s", TOPIC, () -> first, () -> fail("runs once"));
        CompletableFuture<Void> waiter = waiter(new Object());
        first.completeExceptionally(new TopicFencedException("Topic is closing"));
        waiter.join();
        assertEquals(again.get(), 1);
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void anInstallationThatThrowsLeavesNoEntryBehind() {
        for (Throwable thrown : new Throwable[] {new IllegalStateException("simulated"), new AssertionError("error")}) {
            CompletableFuture<Void> failed = flights.run("t\0s", TOPIC, () -> {
                if (thrown instanceof Error) {
                    throw (Error) thrown;
                }
                throw (RuntimeException) thrown;
            }, () -> fail("no waiter"));
            assertSame(expectThrows(CompletionException.class, failed::join).getCause(), thrown);
            assertEquals(flights.size(), 0);
        }
        CompletableFuture<Void> next = new CompletableFuture<>();
        assertSame(flights.run("t\0s", TOPIC, () -> next, () -> fail("not a waiter")), next, "the next one runs");
        next.complete(null);
        assertEquals(flights.size(), 0);
    }

    private CompletableFuture<Void> waiter(Object topic) {
        return flights.run("t\0s", topic, () -> fail("a waiter does not start its own"), () -> {
            again.incrementAndGet();
            return CompletableFuture.completedFuture(null);
        });
    }

    private static CompletableFuture<Void> fail(String why) {
        throw new AssertionError(why);
    }

    /**
     * An installation whose every attempt found the subscription changed answers as stock answers a fenced
     * subscription: not ready, which clients retry. Regression (forty-sixth session, a review): it answered as a
     * busy consumer ({@code SubscriptionBusyException}), which fails a Java client's first subscribe at once.
     */
    @Test(groups = "unit", timeOut = 10_000)
    public void aSubscriptionThatKeptChangingIsAnsweredAsRetriable() {
        assertEquals(org.apache.pulsar.broker.service.BrokerServiceException.getClientErrorCode(
                new SubscriptionInstaller.SubscriptionChanging()),
                org.apache.pulsar.common.api.proto.ServerError.ServiceNotReady);
        assertEquals(org.apache.pulsar.broker.service.BrokerServiceException.getClientErrorCode(
                new SubscriptionBusyException("the first version")),
                org.apache.pulsar.common.api.proto.ServerError.ConsumerBusy, "what it answered before");
    }
}
