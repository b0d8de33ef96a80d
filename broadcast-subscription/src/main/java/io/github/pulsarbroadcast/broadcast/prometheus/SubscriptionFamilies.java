package io.github.pulsarbroadcast.broadcast.prometheus;

import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastConsumer;
import io.github.pulsarbroadcast.broadcast.dispatch.DispatchCounters;
import io.github.pulsarbroadcast.broadcast.dispatch.SubscriptionSnapshot;
import io.github.pulsarbroadcast.broadcast.metrics.LatencyHistogram;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import java.util.function.ToLongFunction;

/**
 * The per-subscription metric families and how each is read from a {@link Sample}. Names follow Pulsar's
 * conventions: {@code pulsar_} prefix, {@code _total} counters, {@code _ms} latencies, and the labels of Pulsar's own
 * subscription metrics ({@code cluster, namespace, topic, subscription}).
 *
 * <p>Threading: immutable tables; {@link #write} runs on the broker's metrics thread.
 */
final class SubscriptionFamilies {

    /** One subscription's values at one scrape. Immutable. */
    static final class Sample {
        final String labels;
        final SubscriptionSnapshot snapshot;
        final DispatchCounters counters;
        final LatencyHistogram.Snapshot receiveToPersisted;

        Sample(String labels, SubscriptionSnapshot snapshot, LatencyHistogram.Snapshot receiveToPersisted) {
            this.labels = labels;
            this.snapshot = snapshot;
            this.counters = snapshot.counters();
            this.receiveToPersisted = receiveToPersisted;
        }
    }

    /** A family with one sample per subscription. */
    private static final class Simple {
        final String name;
        final String type;
        final String help;
        final ToLongFunction<Sample> value;

        Simple(String name, String type, String help, ToLongFunction<Sample> value) {
            this.name = name;
            this.type = type;
            this.help = help;
            this.value = value;
        }
    }

    private static Simple gauge(String name, String help, ToLongFunction<Sample> value) {
        return new Simple(name, "gauge", help, value);
    }

    private static Simple counter(String name, String help, ToLongFunction<Sample> value) {
        return new Simple(name, "counter", help, value);
    }

    private static final List<Simple> SIMPLE = List.of(
            gauge("pulsar_broadcast_retained_positions", "Positions kept for consumers that are not connected",
                    s -> s.snapshot.retained()),
            counter("pulsar_broadcast_messages_delivered_total", "Messages written to consumers",
                    s -> s.counters.messagesDelivered()),
            counter("pulsar_broadcast_bytes_delivered_total", "Payload bytes written to consumers",
                    s -> s.counters.bytesDelivered()),
            counter("pulsar_broadcast_acks_total", "Acknowledgements received (one per acknowledged position)",
                    s -> s.counters.acks()),
            counter("pulsar_broadcast_rejected_acks_total", "Acks of positions never sent to the consumer",
                    s -> s.counters.rejectedAcks()),
            counter("pulsar_broadcast_dropped_acks_total", "Individual acks not kept: consumer at its ack-range limit",
                    s -> s.counters.droppedAcks()),
            counter("pulsar_broadcast_redeliveries_total", "Redelivery requests of consumers",
                    s -> s.counters.redeliveries()),
            counter("pulsar_broadcast_connection_sends_total",
                    "Sends handed to connections, each one write and one flush (deliveries per send: the pass size)",
                    s -> s.counters.connectionSends()),
            counter("pulsar_broadcast_tail_entries_read_total", "Entries read at the tail (once for all consumers)",
                    s -> s.counters.tailEntriesRead()),
            counter("pulsar_broadcast_catchup_entries_read_total", "Entries read for consumers behind the window",
                    s -> s.counters.catchUpEntriesRead()),
            counter("pulsar_broadcast_catchup_bytes_read_total", "Bytes read for consumers behind the window",
                    s -> s.counters.catchUpBytesRead()),
            counter("pulsar_broadcast_read_failures_total", "Storage reads that failed (retried with back-off)",
                    s -> s.counters.readFailures()),
            counter("pulsar_broadcast_entries_skipped_unreadable_total",
                    "Entries skipped because storage can never return them (autoSkipNonRecoverableData)",
                    s -> s.counters.entriesSkippedUnreadable()),
            gauge("pulsar_broadcast_window_entries", "Entries held in memory for consumers a little behind",
                    s -> s.snapshot.windowEntries()),
            gauge("pulsar_broadcast_window_bytes", "Bytes held in memory for consumers a little behind",
                    s -> s.snapshot.windowBytes()),
            counter("pulsar_broadcast_consumers_moved_forward_total",
                    "Consumers moved forward because the subscription's cursor passed them (eviction, TTL, skip)",
                    s -> s.counters.consumersSkippedForward()),
            counter("pulsar_broadcast_retained_expired_total",
                    "Retained positions dropped: their consumer did not come back within the retention",
                    s -> s.counters.retainedExpired()),
            counter("pulsar_broadcast_resumed_total", "Joins that resumed a retained position by consumer name",
                    s -> s.counters.resumedByName()),
            counter("pulsar_broadcast_stock_stats_summarized_total",
                    "Scrapes whose stock metrics got this subscription's consumer totals, not a record per consumer",
                    s -> s.counters.stockStatsSummarized()));

    private static final BroadcastConsumer.State[] STATES = {BroadcastConsumer.State.WAITING,
            BroadcastConsumer.State.PENDING, BroadcastConsumer.State.CATCHING_UP, BroadcastConsumer.State.IDLE};

    /** The {@code quantile} label values of the lag family: the median, the 99th percentile, the maximum. */
    private static final String[] LAG_QUANTILES = {"0.5", "0.99", "1"};

    private static final String[] STAGES = {"receive_to_persisted", "persisted_to_dispatch",
            "dispatch_to_first_write", "dispatch_to_last_write"};

    private SubscriptionFamilies() {
    }

    /** Writes every per-subscription family, each with one sample per subscription. */
    static void write(MetricsText text, List<Sample> samples) {
        text.family("pulsar_broadcast_consumers", "gauge",
                "Connected consumers by where the dispatcher keeps them (waiting at the tail, pending service"
                        + " from the window, catching up from storage, idle without permits)");
        for (Sample s : samples) {
            for (BroadcastConsumer.State state : STATES) {
                text.sample("pulsar_broadcast_consumers", s.labels + ","
                        + MetricsText.label("state", state.name().toLowerCase(Locale.ROOT)),
                        s.snapshot.consumers(state));
            }
        }
        for (Simple f : SIMPLE) {
            text.family(f.name, f.type, f.help);
            for (Sample s : samples) {
                text.sample(f.name, s.labels, f.value.applyAsLong(s));
            }
        }
        writeLag(text, samples);
        writeHistograms(text, samples);
    }

    private static void writeLag(MetricsText text, List<Sample> samples) {
        text.family("pulsar_broadcast_consumer_lag_entries", "gauge",
                "Entries between a consumer's acknowledged position and the last written entry, over connected and"
                        + " retained consumers: median, 99th percentile and maximum (quantile 1)");
        for (Sample s : samples) {
            long[] values = {s.snapshot.lagMedian(), s.snapshot.lagP99(), s.snapshot.lagMax()};
            for (int i = 0; i < LAG_QUANTILES.length; i++) {
                text.sample("pulsar_broadcast_consumer_lag_entries", s.labels + "," + MetricsText.label("quantile",
                        LAG_QUANTILES[i]), values[i]);
            }
        }
    }

    private static void writeHistograms(MetricsText text, List<Sample> samples) {
        text.family("pulsar_broadcast_fanout_pass_ms", "histogram",
                "Dispatch-thread time of one pass of new entries over the consumers waiting at the tail");
        for (Sample s : samples) {
            text.histogram("pulsar_broadcast_fanout_pass_ms", s.labels, s.counters.fanOutPass().snapshot());
        }
        text.family("pulsar_broadcast_stage_latency_ms", "histogram",
                "Per-entry time of each broker stage: receive to persisted, persisted to dispatch, dispatch to the"
                        + " first and to the last consumer connection written");
        List<Function<Sample, LatencyHistogram.Snapshot>> stages = List.of(s -> s.receiveToPersisted,
                s -> s.counters.persistedToDispatch().snapshot(), s -> s.counters.dispatchToFirstWrite().snapshot(),
                s -> s.counters.dispatchToLastWrite().snapshot());
        for (Sample s : samples) {
            for (int i = 0; i < STAGES.length; i++) {
                text.histogram("pulsar_broadcast_stage_latency_ms",
                        s.labels + "," + MetricsText.label("stage", STAGES[i]), stages.get(i).apply(s));
            }
        }
    }
}
