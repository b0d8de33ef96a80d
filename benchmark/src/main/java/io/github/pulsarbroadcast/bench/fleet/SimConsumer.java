package io.github.pulsarbroadcast.bench.fleet;

import io.github.pulsarbroadcast.bench.core.ConsumerTracker;
import io.github.pulsarbroadcast.bench.core.Deliveries;
import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.common.api.proto.ServerError;
import org.apache.pulsar.common.protocol.Commands;

/**
 * One simulated consumer: looks its topic up (through its {@link ClientGroup}), subscribes with the mode's type and
 * properties and its own name, asks for {@code receiverQueue} messages and refills the permits at half the queue as
 * the stock client does, reads every MESSAGE frame ({@link EntryReader}; a batched entry counts its messages),
 * accounts each message in {@link Deliveries} and acknowledges it (one command per entry, individual or cumulative).
 * When the broker closes it or its connection goes away it subscribes again with the same name after a back-off
 * (100 ms doubling to 30 s, as the stock client's), and counts the reconnect.
 *
 * <p>Threading: every method runs on the group's event loop (the connector thread only hands {@link #start} over to
 * it); no field needs a lock. {@link #message} is called back by the {@link EntryReader} within {@link #onEntry}.
 */
final class SimConsumer implements EntryReader.Sink {

    private enum State { IDLE, STARTING, ACTIVE, CLOSING, CLOSED, FAILED }

    private static final long INITIAL_BACKOFF_MS = 100;
    private static final long MAX_BACKOFF_MS = 30_000;
    /** Errors on which the stock client keeps retrying a first subscribe (null: the connection was lost). */
    private static final Set<ServerError> RETRIABLE = EnumSet.of(ServerError.ServiceNotReady,
            ServerError.TooManyRequests, ServerError.MetadataError, ServerError.PersistenceError,
            ServerError.UnknownError);

    private final ClientGroup group;
    private final FleetEngine engine;
    private final long consumerId;
    private final ConsumerTracker tracker;
    private final Subscriber subscriber;
    private State state = State.IDLE;
    private FleetHandler handler;
    private int available;
    private boolean paused;
    private boolean connectedOnce;
    private long requestedNanos;
    private long backoffMs = INITIAL_BACKOFF_MS;
    /** Releases the connect permit at the first outcome (connected or failed); null after. */
    private Runnable firstOutcome;
    /** The last entry received (a reader resubscribes from there), or -1. */
    private long lastLedgerId = -1;
    private long lastEntryId = -1;
    /**
     * A reader's resume point: the broker sends entries up to it again after a resubscribe (stock 2.10 starts a
     * reader at the entry of a start id whose batch index is -1), and the stock client drops them; so does this one.
     * -1 when not resuming.
     */
    private long resumeLedgerId = -1;
    private long resumeEntryId = -1;
    /** True while an entry that the resume point covers is read: its messages are not accounted. */
    private boolean dropping;
    /** The clocks of the entry being read, for {@link #message}. */
    private long entryNanos;
    private long entryMs;

    SimConsumer(ClientGroup group, long consumerId, ConsumerTracker tracker, Subscriber subscriber) {
        this.group = group;
        this.engine = group.engine();
        this.consumerId = consumerId;
        this.tracker = tracker;
        this.subscriber = subscriber;
    }

    long consumerId() {
        return consumerId;
    }

    int index() {
        return tracker.index();
    }

    /** First subscribe; {@code outcome} runs once it succeeded or failed for good. */
    void start(Runnable outcome) {
        firstOutcome = outcome;
        requestedNanos = System.nanoTime();
        attempt();
    }

    private void attempt() {
        if (state == State.CLOSING) {
            closed();
            return;
        }
        state = State.STARTING;
        group.locate(this);
    }

    /** The group found the connection to subscribe on. */
    void subscribeOn(FleetHandler h) {
        if (state != State.STARTING) {
            if (state == State.CLOSING) {
                closed();
            }
            return;
        }
        long requestId = group.newRequestId();
        ByteBuf command = subscriber.subscribe(index(), consumerId, requestId, lastLedgerId, lastEntryId);
        if (subscriber.resumesFromLastEntry()) {
            resumeLedgerId = lastLedgerId;
            resumeEntryId = lastEntryId;
        }
        h.request(command, requestId, new FleetHandler.Pending() {
            @Override
            void success() {
                subscribed(h);
            }

            @Override
            void error(ServerError error, String message) {
                failedAttempt(error, message);
            }
        });
    }

    private void subscribed(FleetHandler h) {
        if (state == State.CLOSING) {
            handler = h;
            sendClose();
            return;
        }
        state = State.ACTIVE;
        handler = h;
        h.register(this);
        engine.subscribed();
        backoffMs = INITIAL_BACKOFF_MS;
        if (!connectedOnce) {
            connectedOnce = true;
            long now = System.nanoTime();
            tracker.connected(TimeUnit.NANOSECONDS.toMillis(now - engine.phaseStartNanos()),
                    TimeUnit.NANOSECONDS.toMillis(now - requestedNanos));
            engine.consumerConnected();
            outcome();
        }
        available = subscriber.receiverQueue();
        maybeFlow();
    }

    /** A lookup or subscribe attempt failed: {@code error} null when its connection was lost. */
    void failedAttempt(ServerError error, String message) {
        if (state == State.CLOSING) {
            closed();
        } else if (state != State.STARTING) {
            return;
        } else if (connectedOnce || error == null || RETRIABLE.contains(error)) {
            retryLater();
        } else {
            state = State.FAILED;
            engine.consumerFailed("consumer " + index() + ": " + error + " " + message);
            outcome();
        }
    }

    /** The broker closed this consumer, or its connection went away. */
    void disconnected(String why) {
        if (state == State.ACTIVE) {
            handler = null;
            engine.unsubscribed();
            engine.reconnected();
            retryLater();
        } else if (state == State.STARTING) {
            retryLater();
        } else if (state == State.CLOSING) {
            closed();
        }
    }

    private void retryLater() {
        state = State.STARTING;
        if (engine.closing()) {
            state = State.CLOSING;
            closed();
            return;
        }
        long delay = backoffMs;
        backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS);
        group.loop().schedule(this::attempt, delay, TimeUnit.MILLISECONDS);
    }

    private void outcome() {
        if (firstOutcome != null) {
            Runnable r = firstOutcome;
            firstOutcome = null;
            r.run();
        }
    }

    /** One MESSAGE frame for this consumer on {@code h}. */
    void onEntry(FleetHandler h, long ledgerId, long entryId, ByteBuf headersAndPayload) {
        if (state != State.ACTIVE || h != handler) {
            return;
        }
        entryNanos = System.nanoTime();
        entryMs = System.currentTimeMillis();
        boolean again = resumeLedgerId >= 0
                && (ledgerId < resumeLedgerId || ledgerId == resumeLedgerId && entryId <= resumeEntryId);
        if (!again) {
            resumeLedgerId = -1;
        }
        dropping = again;
        int messages;
        try {
            messages = group.reader().read(headersAndPayload, this);
        } catch (IOException | RuntimeException e) {
            engine.entryFailed("consumer " + index() + " entry " + ledgerId + ":" + entryId + ": " + e.getMessage());
            messages = 1;
        } finally {
            dropping = false;
        }
        if (!again) {
            lastLedgerId = ledgerId;
            lastEntryId = entryId;
        }
        h.ack(consumerId, ledgerId, entryId, subscriber.cumulative());
        available += messages;
        maybeFlow();
    }

    @Override
    public void message(long sequenceId, long eventTime, long publishTimeMs, long brokerPublishTimeMs) {
        if (dropping) {
            return;
        }
        engine.deliveries().onMessage(tracker, Math.toIntExact(sequenceId), entryNanos, entryMs, eventTime,
                publishTimeMs, brokerPublishTimeMs);
    }

    private void maybeFlow() {
        if (!paused && handler != null && state == State.ACTIVE && available >= subscriber.refillThreshold()) {
            handler.flow(consumerId, available);
            available = 0;
        }
    }

    /** Stops asking for messages (what {@code Consumer.pause()} does). */
    void pause() {
        paused = true;
    }

    void resume() {
        paused = false;
        maybeFlow();
    }

    /** Closes the consumer on the broker (CLOSE_CONSUMER) or stops its attempts; {@link FleetEngine} counts it. */
    void close() {
        switch (state) {
            case ACTIVE:
                state = State.CLOSING;
                engine.unsubscribed();
                handler.unregister(this);
                sendClose();
                break;
            case STARTING:
                state = State.CLOSING; // the attempt in flight ends in closed()
                break;
            case CLOSING:
            case CLOSED:
                break;
            default:
                state = State.CLOSING;
                closed();
        }
    }

    private void sendClose() {
        long requestId = group.newRequestId();
        handler.request(Commands.newCloseConsumer(consumerId, requestId), requestId, new FleetHandler.Pending() {
            @Override
            void success() {
                closed();
            }

            @Override
            void error(ServerError error, String message) {
                closed();
            }
        });
    }

    private void closed() {
        if (state != State.CLOSED) {
            state = State.CLOSED;
            engine.consumerClosed();
        }
    }
}
