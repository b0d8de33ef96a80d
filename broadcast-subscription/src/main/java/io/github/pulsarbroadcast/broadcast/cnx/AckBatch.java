package io.github.pulsarbroadcast.broadcast.cnx;

import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastConsumer;
import java.util.ArrayList;
import java.util.List;

/**
 * The broadcast acknowledgements that one connection decoded in one pass of its event loop, applied together as one
 * task on a random executor thread.
 *
 * <p>Why: at 10,000 consumers every message brings 10,000 ack commands back. Handing each of them to the executor
 * on its own wakes an executor thread per ack (a futex call each, measured as the largest single item of the
 * broker's ack path); a connection's acks mostly arrive together, so one hand-off per event-loop pass does the same
 * work with one wake-up. Acks never needed an order between themselves (each virtual cursor is thread-safe), and
 * they still never wait behind dispatch work.
 *
 * <p>Threading: filled on the connection's event loop only ({@link #add}); handed to the executor once, whose
 * hand-off publishes it; {@link #run} runs once on that executor thread. Not reused.
 */
final class AckBatch implements Runnable {

    private final BroadcastServerCnx cnx;
    private final List<BroadcastConsumer> consumers = new ArrayList<>();
    private final List<AckCopy> acks = new ArrayList<>();

    AckBatch(BroadcastServerCnx cnx) {
        this.cnx = cnx;
    }

    /** Adds one ack command of {@code consumer}. Event loop only, before the hand-off. */
    void add(BroadcastConsumer consumer, AckCopy ack) {
        consumers.add(consumer);
        acks.add(ack);
    }

    int size() {
        return acks.size();
    }

    /** Applies every ack in the order the connection received them. */
    @Override
    public void run() {
        for (int i = 0; i < acks.size(); i++) {
            acks.get(i).applyTo(consumers.get(i), cnx);
        }
    }
}
