package io.github.pulsarbroadcast.broadcast.dispatch;

import java.util.concurrent.atomic.LongAdder;

/**
 * What one broadcast subscription's dispatcher counts, for stats, metrics and tests.
 *
 * <p>Threading: the {@code long} counters are single-writer (the subscription's dispatch thread) and volatile for
 * readers; the {@link LongAdder}s are written by acknowledgement threads and by joins and leaves on any thread.
 */
public final class DispatchCounters {

    volatile long tailEntriesRead;
    volatile long catchUpEntriesRead;
    volatile long consumersSkippedForward;
    volatile long readFailures;
    volatile long entriesSkippedUnreadable;
    /** The thread that last ran the subscription's periodic dispatch work. */
    volatile String dispatchThreadName;
    final LongAdder rejectedAcks = new LongAdder();
    final LongAdder droppedAcks = new LongAdder();
    final LongAdder resumedByName = new LongAdder();
    final LongAdder retainedExpired = new LongAdder();

    /** Entries read from storage at the tail (each once, whatever the number of consumers). */
    public long tailEntriesRead() {
        return tailEntriesRead;
    }

    /** Entries read from storage (through the entry cache) for consumers behind the window. */
    public long catchUpEntriesRead() {
        return catchUpEntriesRead;
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

    /** Name of the thread that ran the subscription's periodic dispatch work, or null before the first run. */
    public String dispatchThreadName() {
        return dispatchThreadName;
    }
}
