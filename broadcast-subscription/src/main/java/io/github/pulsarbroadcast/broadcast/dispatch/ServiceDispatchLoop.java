package io.github.pulsarbroadcast.broadcast.dispatch;

import io.github.pulsarbroadcast.broadcast.BroadcastService;
import io.github.pulsarbroadcast.executor.SubscriptionKey;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * The dispatch loop of one broadcast subscription on a broker: tasks ordered on the plugin's subscription-keyed
 * executor under the subscription's key, delays on the plugin's scheduler, background work (position saves) on their
 * own executor.
 *
 * <p>Threading: immutable; any thread.
 */
final class ServiceDispatchLoop implements DispatchLoop {

    private final BroadcastService service;
    private final SubscriptionKey key;

    ServiceDispatchLoop(BroadcastService service, SubscriptionKey key) {
        this.service = service;
        this.key = key;
    }

    @Override
    public void post(Runnable task) {
        service.executor().executeOrdered(key, task);
    }

    @Override
    public void schedule(Runnable task, long delayMs) {
        service.scheduler().schedule(() -> post(task), delayMs, TimeUnit.MILLISECONDS);
    }

    @Override
    public Executor background() {
        return service.positionSaves();
    }
}
