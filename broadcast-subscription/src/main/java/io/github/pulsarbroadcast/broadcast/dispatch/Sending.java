package io.github.pulsarbroadcast.broadcast.dispatch;

import io.github.pulsarbroadcast.broadcast.metrics.PassTiming;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds the sends of a pass ({@link ConnectionSend}, one per connection, each consumer's entries in it while its
 * permits last) and hands them to their connections ({@link #submit}).
 *
 * <p>Threading: confined to the subscription's dispatch thread (with its {@link FanOut}); stateless itself.
 */
final class Sending {

    private static final Logger log = LoggerFactory.getLogger(Sending.class);

    private final SubscriptionEngine owner;
    private final String name;

    Sending(SubscriptionEngine owner, String name) {
        this.owner = owner;
        this.name = name;
    }

    /** Sends entries from {@code source}, starting at {@code index}, while the consumer has permits. */
    void sendFrom(EntrySource source, int index, BroadcastConsumer bc, Map<ConsumerConnection, ConnectionSend> sends) {
        if (index < source.size() && bc.cursor.sending.permits() > 0) {
            sendFrom(source, index, bc, sendFor(bc.cnx, sends));
        }
    }

    /** The send of connection {@code cnx} in {@code sends}, added when it has none yet. */
    ConnectionSend sendFor(ConsumerConnection cnx, Map<ConsumerConnection, ConnectionSend> sends) {
        ConnectionSend send = sends.get(cnx);
        if (send == null) { // not computeIfAbsent: its capturing lambda would allocate per consumer
            send = new ConnectionSend(owner.topicName(), owner.partitionIndex(), owner.counters());
            sends.put(cnx, send);
        }
        return send;
    }

    /**
     * Sends entries from {@code source}, starting at {@code index}, while the consumer has permits, through
     * {@code send}, its connection's send.
     */
    void sendFrom(EntrySource source, int index, BroadcastConsumer bc, ConnectionSend send) {
        if (index >= source.size() || bc.cursor.sending.permits() <= 0 || bc.isRemoved()) {
            return; // removed: it left, and its cursor may be another consumer's now (BroadcastConsumer#markDetached)
        }
        send.startConsumer(bc, bc.epoch);
        for (int i = index; i < source.size() && bc.cursor.sending.permits() > 0; i++) {
            WindowEntry e = source.get(i);
            PositionImpl following = i + 1 < source.size() ? source.get(i + 1).position : source.after();
            if (bc.cursor.needsNoSending(e.position)) {
                bc.cursor.skip(following);
            } else if (e.withheld) {
                owner.passWithheld(bc, e.position);
                bc.cursor.skip(following);
            } else {
                send.addEntry(e);
                bc.cursor.sent(e.position, following, e.messages);
            }
        }
        send.endConsumer();
    }

    /** Hands each connection its send; a connection whose event loop is gone gets nothing and leaks nothing. */
    void submit(Map<ConsumerConnection, ConnectionSend> sends) {
        submit(sends, 0, 0);
    }

    /**
     * {@link #submit(Map)}, and when {@code entries > 0} times the pass that started at {@code startNanos} until its
     * first and its last connection have written ({@link PassTiming}).
     */
    void submit(Map<ConsumerConnection, ConnectionSend> sends, long startNanos, int entries) {
        PassTiming timing = entries > 0 ? timing(sends, startNanos, entries) : null;
        for (Map.Entry<ConsumerConnection, ConnectionSend> e : sends.entrySet()) {
            ConnectionSend send = e.getValue();
            if (send.isEmpty()) {
                send.release();
                continue;
            }
            send.timing(timing);
            try {
                e.getKey().submit(send);
                owner.counters().connectionSends++;
            } catch (RejectedExecutionException rejected) {
                send.abandon();
                if (log.isDebugEnabled()) {
                    log.debug("{} Connection no longer takes sends: {}", name, rejected.toString());
                }
            } catch (RuntimeException failed) {
                // A defect (ConsumerConnection.submit throws only before it queues the send): the other connections
                // still get theirs; this one's consumers, whose cursors count these entries as sent, get them again
                // only when they reconnect or ask for a redelivery (a client without an ack timeout waits until then).
                send.abandon();
                log.error("{} Handing a send to connection {} failed", name, e.getKey(), failed);
            }
        }
    }

    private PassTiming timing(Map<ConsumerConnection, ConnectionSend> sends, long startNanos, int entries) {
        int connections = 0;
        for (ConnectionSend send : sends.values()) {
            connections += send.isEmpty() ? 0 : 1;
        }
        DispatchCounters counters = owner.counters();
        return connections == 0 ? null : new PassTiming(startNanos, entries, connections,
                counters.dispatchToFirstWrite, counters.dispatchToLastWrite);
    }

}
