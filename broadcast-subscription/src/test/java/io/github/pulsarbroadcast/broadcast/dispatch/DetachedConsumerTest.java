package io.github.pulsarbroadcast.broadcast.dispatch;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.testng.annotations.Test;

/**
 * A consumer that left is served no more from the moment it detaches, before the dispatch thread removes it from its
 * lists: a consumer that resumes its name at once shares its cursor. Regression (a read-only review, forty-fifth
 * session): {@code leave} posts the removal from the leaving thread after the name is free, so the resuming join
 * could run first; the one that left, still waiting at the tail, was served from the shared cursor, which moved past
 * entries the resumed consumer then never got (lost to a cumulative ack).
 *
 * <p>Threading: the test thread plays the dispatch thread, the leaving thread and the subscribing one.
 */
public class DetachedConsumerTest {

    @Test(groups = "unit", timeOut = 30_000)
    public void aConsumerThatLeftIsNotServedFromTheCursorItsNameResumed() throws Exception {
        ModelHarness world = new ModelHarness();
        ModelLedger ledger = new ModelLedger(3, 5);
        SubscriptionEngine engine = world.newEngine("persistent://t/ns/detached", ledger);
        Map<Long, List<PositionImpl>> got = new HashMap<>();
        // One connection for both, so that the one that left is listed first at the tail (a deterministic order).
        ModelHarness.Connection cnx = new ModelHarness.Connection(new ModelHarness.Deliveries() {
            @Override
            public void delivered(BroadcastConsumer consumer, WindowEntry entry, long epoch) {
                got.computeIfAbsent(consumer.consumerId(), k -> new ArrayList<>()).add(entry.position);
            }

            @Override
            public void endOfTopic(long consumerId) {
            }
        });
        BroadcastConsumer left = engine.join(1, "car", cnx, InitialPosition.Latest, 0);
        world.settle(ledger);
        engine.flow(left, 1000);
        world.settle(ledger);
        List<PositionImpl> published = new ArrayList<>(world.publishSettled(ledger, 1));

        engine.leave(left);
        Runnable removal = world.takeLastTask(); // the leaving thread's post lands late
        BroadcastConsumer resumed = engine.join(2, "car", cnx, InitialPosition.Latest, 0);
        assertTrue(resumed.resumed, "the name resumed its position");
        world.settle(ledger);
        engine.flow(resumed, 1000);
        world.settle(ledger);
        published.addAll(world.publishSettled(ledger, 2));
        world.post(removal);
        world.settle(ledger);
        published.addAll(world.publishSettled(ledger, 1));

        assertEquals(got.get(1L), published.subList(0, 1), "nothing after it left");
        assertEquals(got.get(2L), published, "the resumed consumer: from its acknowledged position, everything");
    }
}
