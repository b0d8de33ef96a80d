package io.github.pulsarbroadcast.broadcast.dispatch;

import io.github.pulsarbroadcast.broadcast.metrics.PassTiming;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * All the messages one dispatch round sends on one connection: one task on that connection's event loop and one
 * flush, however many of the subscription's consumers share the connection. Only the small per-consumer command
 * header differs between the messages of one entry. On a plain connection of a broker without other interceptors
 * the frames are written by {@link MessageFrames} (small entries copied after their headers into one buffer per
 * pass); otherwise each message goes through the stock {@code newMessageAndIntercept}, sharing the entry's bytes.
 *
 * <p>Threading: built on the dispatch thread, then handed to the connection ({@link ConsumerConnection#submit}),
 * whose event loop runs it once (the executor's hand-off publishes it). It holds one reference to each of its
 * entries from {@link #addEntry} until {@link #run} ends.
 */
public final class ConnectionSend implements Runnable {

    private static final Logger log = LoggerFactory.getLogger(ConnectionSend.class);

    private final String topic;
    private final int partitionIndex;
    private final DispatchCounters counters;
    /** The pass this send belongs to, when it is timed; set before the hand-off to the event loop. */
    private PassTiming timing;
    /** The distinct entries of this send, each retained once. */
    private final List<WindowEntry> entries = new ArrayList<>(4);
    private final List<BroadcastConsumer> consumers = new ArrayList<>();
    private long[] epochs = new long[8];
    /** Consumer c sends entries[plan[i]] for i in [planStart[c], planStart[c + 1]). */
    private int[] planStart = new int[9];
    private int[] plan = new int[8];
    private int planSize;
    /** Index of the entry added last: a consumer's entries mostly follow each other in {@link #entries}. */
    private int lastIndex = -1;

    ConnectionSend(String topic, int partitionIndex, DispatchCounters counters) {
        this.topic = topic;
        this.partitionIndex = partitionIndex;
        this.counters = counters;
    }

    /** Times this send as part of a pass (null: not timed); before the hand-off. */
    void timing(PassTiming passTiming) {
        this.timing = passTiming;
    }

    /** Starts the list of entries for {@code consumer}; {@link #addEntry} calls that follow belong to it. */
    void startConsumer(BroadcastConsumer consumer, long epoch) {
        int c = consumers.size();
        if (c == epochs.length) {
            // epochs holds one slot per consumer, planStart one more (the end of the last consumer's list).
            epochs = Arrays.copyOf(epochs, c * 2);
            planStart = Arrays.copyOf(planStart, c * 2 + 1);
        }
        consumers.add(consumer);
        epochs[c] = epoch;
        planStart[c] = planSize;
        planStart[c + 1] = planSize;
    }

    /** Adds {@code entry} to the current consumer's list. */
    void addEntry(WindowEntry entry) {
        if (planSize == plan.length) {
            plan = Arrays.copyOf(plan, plan.length * 2);
        }
        plan[planSize++] = indexOf(entry);
        planStart[consumers.size()] = planSize;
    }

    /** Drops the current consumer if nothing was added for it. */
    void endConsumer() {
        int c = consumers.size() - 1;
        if (c >= 0 && planStart[c] == planSize) {
            consumers.remove(c);
        }
    }

    boolean isEmpty() {
        return consumers.isEmpty();
    }

    private int indexOf(WindowEntry entry) {
        // The usual case is the entry after the last one (a consumer takes a run of entries), so that costs one
        // comparison; a scan happens only where a consumer's run starts, which keeps a k-entry run O(k).
        int next = lastIndex + 1;
        if (next < entries.size() && entries.get(next) == entry) {
            return lastIndex = next;
        }
        for (int i = entries.size() - 1; i >= 0; i--) {
            if (entries.get(i) == entry) {
                return lastIndex = i;
            }
        }
        entry.retain();
        entries.add(entry);
        return lastIndex = entries.size() - 1;
    }

    @Override
    public void run() {
        try {
            ConsumerConnection cnx = consumers.get(0).cnx;
            ChannelHandlerContext ctx = cnx.ctx();
            writeAll(ctx, cnx.writesFramesDirectly(), System.currentTimeMillis());
            cnx.flushContext().flush();
            if (timing != null) {
                timing.written(System.nanoTime());
                timing = null;
            }
        } catch (RuntimeException e) {
            log.warn("[{}] Sending to {} consumers failed: {}", topic, consumers.size(), e.toString());
        } finally {
            abandon();
        }
    }

    /** Gives back the entries without sending, and tells the pass this part will not be written. */
    void abandon() {
        release();
        if (timing != null) {
            timing.abandoned();
            timing = null;
        }
    }

    /** What a send delivers: one call per consumer and entry, in write order (for tests of the dispatch core). */
    interface DeliveryVisitor {
        void delivered(BroadcastConsumer consumer, WindowEntry entry, long epoch);
    }

    /** Visits every delivery of this send without writing anything; {@link #release} it afterwards. */
    void forEachDelivery(DeliveryVisitor visitor) {
        for (int c = 0; c < consumers.size(); c++) {
            for (int i = planStart[c]; i < planStart[c + 1]; i++) {
                visitor.delivered(consumers.get(c), entries.get(plan[i]), epochs[c]);
            }
        }
    }

    /** Gives back the entries without sending (the connection is gone or the dispatcher closed). */
    void release() {
        for (int i = 0; i < entries.size(); i++) {
            entries.get(i).release();
        }
        entries.clear();
    }

    /**
     * Writes every consumer's messages: as this pass's own frames ({@link MessageFrames}: small entries copied after
     * their headers, so that the pass is usually one contiguous buffer) when {@code direct}; else through the stock
     * {@code ServerCnx.newMessageAndIntercept}, with its interceptor calls.
     *
     * <p>Per entry, one connection-local view of its bytes is taken (a pooled slice with a reference count of its
     * own: {@link WindowEntry} keeps entries in one pooled buffer for this) and read by every frame of the pass;
     * frames that share the entry instead of copying it take a duplicate of that view. Taking those references on
     * the entry's own buffer would make thousands of atomic updates of one reference count from all event-loop
     * threads at once (measured as the largest single cost of the send before the views).
     */
    private void writeAll(ChannelHandlerContext ctx, boolean direct, long nowMillis) {
        MessageFrames frames = direct
                ? new MessageFrames(ctx.alloc(), planSize, partitionIndex,
                        ctx.channel().isWritable() ? MessageFrames.copyBudget(consumers.size()) : 0) : null;
        // Per entry, its view without (even index) and with (odd index) the broker entry metadata; made on first use.
        ByteBuf[] views = direct ? new ByteBuf[entries.size() * 2] : null;
        long totalMessages = 0;
        long totalBytes = 0;
        try {
            for (int c = 0; c < consumers.size(); c++) {
                BroadcastConsumer bc = consumers.get(c);
                if (bc.isRemoved()) {
                    continue;
                }
                int messages = 0;
                int bytes = 0;
                for (int i = planStart[c]; i < planStart[c + 1]; i++) {
                    WindowEntry e = entries.get(plan[i]);
                    if (direct) {
                        frames.add(bc.consumerId(), e.position, epochs[c], view(views, plan[i], e,
                                bc.brokerEntryMetadata));
                    } else {
                        ctx.write(bc.cnx.newMessageAndIntercept(bc.consumerId(), e.position.getLedgerId(),
                                e.position.getEntryId(), partitionIndex, 0, e.payloadFor(bc.brokerEntryMetadata),
                                null, topic, epochs[c]), ctx.voidPromise());
                    }
                    messages += e.messages;
                    bytes += e.payloadSize();
                }
                bc.countSent(messages, bytes, nowMillis);
                totalMessages += messages;
                totalBytes += bytes;
            }
            ByteBuf out = direct ? frames.finish() : null;
            if (out != null) {
                ctx.write(out, ctx.voidPromise());
            }
        } finally {
            counters.messagesDelivered.add(totalMessages);
            counters.bytesDelivered.add(totalBytes);
            if (direct) {
                frames.release(); // nothing left after finish(); after a failure on the way, what was built
                releaseAll(views);
            }
        }
    }

    private static void releaseAll(ByteBuf[] buffers) {
        for (ByteBuf b : buffers) {
            if (b != null) {
                b.release();
            }
        }
    }

    private static ByteBuf view(ByteBuf[] views, int index, WindowEntry entry, boolean withBrokerEntryMetadata) {
        int slot = index * 2 + (withBrokerEntryMetadata ? 1 : 0);
        ByteBuf v = views[slot];
        if (v == null) {
            v = entry.payloadFor(withBrokerEntryMetadata);
            views[slot] = v;
        }
        return v;
    }
}
