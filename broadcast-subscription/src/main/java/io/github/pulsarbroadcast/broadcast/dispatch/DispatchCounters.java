package io.github.pulsarbroadcast.broadcast.dispatch;

import io.github.pulsarbroadcast.broadcast.metrics.LatencyHistogram;
import java.util.concurrent.atomic.LongAdder;

/**
 * What one broadcast subscription's dispatcher counts, for stats, metrics and tests.
 *
 * <p>Threading: the {@code long} counters are single-writer (the subscription's dispatch thread) and volatile for
 * readers; the {@link LongAdder}s are written by acknowledgement threads, event loops (deliveries) and by joins and
 * leaves on any thread; the histograms take any writer.
 */
public final class DispatchCounters {

    volatile long tailEntriesRead;
    volatile long catchUpEntriesRead;
    volatile long catchUpBytesRead;
    volatile long consumersSkippedForward;
    volatile long readFailures;
    volatile long entriesSkippedUnreadable;
    /** Sends handed to connections: each one event-loop task, one write and one flush. */
    volatile long connectionSends;
    /** The thread that last ran the subscription's periodic dispatch work. */
    volatile String dispatchThreadName;
    final LongAdder rejectedAcks = new LongAdder();
    final LongAdder droppedAcks = new LongAdder();
    final LongAdder resumedByName = new LongAdder();
    final LongAdder retainedExpired = new LongAdder();
    final LongAdder acks = new LongAdder();
    final LongAdder redeliveries = new LongAdder();
    /** Scrapes whose stock aggregator got this subscription's consumer totals ({@link StockConsumerStats}). */
    final LongAdder stockStatsSummarized = new LongAdder();
    /** Added once per connection and pass by the event loop that wrote it. */
    final LongAdder messagesDelivered = new LongAdder();
    final LongAdder bytesDelivered = new LongAdder();
    /** Dispatch-thread time of one pass of new entries over the consumers waiting at the tail. */
    final LatencyHistogram fanOutPass = new LatencyHistogram();
    /** From the storage callback that brings new entries to the start of their pass on the dispatch thread. */
    final LatencyHistogram persistedToDispatch = new LatencyHistogram();
    final LatencyHistogram dispatchToFirstWrite = new LatencyHistogram();
    final LatencyHistogram dispatchToLastWrite = new LatencyHistogram();

    /** Entries read from storage at the tail (each once, whatever the number of consumers). */
    public long tailEntriesRead() {
        return tailEntriesRead;
    }

    /** Entries read from storage (through the entry cache) for consumers behind the window. */
    public long catchUpEntriesRead() {
        return catchUpEntriesRead;
    }

    /** Bytes of the entries read for consumers behind the window. */
    public long catchUpBytesRead() {
        return catchUpBytesRead;
    }

    /** Acknowledgements received (each message of an individual ack list, each cumulative ack). */
    public long acks() {
        return acks.sum();
    }

    /** Redelivery requests (each rewinds the consumer to its acknowledged position). */
    public long redeliveries() {
        return redeliveries.sum();
    }

    /** Messages written to consumers (a batched entry counts its messages). */
    public long messagesDelivered() {
        return messagesDelivered.sum();
    }

    /** Bytes written to consumers (the entries' payloads). */
    public long bytesDelivered() {
        return bytesDelivered.sum();
    }

    public LatencyHistogram fanOutPass() {
        return fanOutPass;
    }

    public LatencyHistogram persistedToDispatch() {
        return persistedToDispatch;
    }

    public LatencyHistogram dispatchToFirstWrite() {
        return dispatchToFirstWrite;
    }

    public LatencyHistogram dispatchToLastWrite() {
        return dispatchToLastWrite;
    }

    /** Consumers moved forward because the subscription's cursor was moved past them. */
    public long consumersSkippedForward() {
        return consumersSkippedForward;
    }

    /** Storage reads that failed (each retried with back-off). */
    public long readFailures() {
        return readFailures;
    }

    /** Entries skipped because storage can never return them ({@code autoSkipNonRecoverableData}). */
    public long entriesSkippedUnreadable() {
        return entriesSkippedUnreadable;
    }

    /** Sends handed to connections (one write and one flush each); deliveries per send tell the pass size. */
    public long connectionSends() {
        return connectionSends;
    }

    /** Acks rejected because they named positions never sent to the consumer. */
    public long rejectedAcks() {
        return rejectedAcks.sum();
    }

    /** Individual acks not recorded because the consumer held the maximum number of ack ranges. */
    public long droppedAcks() {
        return droppedAcks.sum();
    }

    /** Joins that resumed a retained position by consumer name. */
    public long resumedByName() {
        return resumedByName.sum();
    }

    /** Retained positions dropped because their consumer did not come back in time. */
    public long retainedExpired() {
        return retainedExpired.sum();
    }

    /**
     * How many times stock Pulsar's metrics aggregator got this subscription's consumer totals in one record instead
     * of one record per consumer ({@link StockConsumerStats}).
     */
    public long stockStatsSummarized() {
        return stockStatsSummarized.sum();
    }

    /** Name of the thread that ran the subscription's periodic dispatch work, or null before the first run. */
    public String dispatchThreadName() {
        return dispatchThreadName;
    }
}
