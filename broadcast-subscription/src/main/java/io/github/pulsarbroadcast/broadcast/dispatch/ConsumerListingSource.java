package io.github.pulsarbroadcast.broadcast.dispatch;

import io.github.pulsarbroadcast.broadcast.listing.ConsumerListing;
import io.github.pulsarbroadcast.broadcast.listing.ConsumerRow;
import io.github.pulsarbroadcast.broadcast.listing.ListingQuery;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.apache.pulsar.broker.service.Consumer;
import org.apache.pulsar.common.policies.data.stats.ConsumerStatsImpl;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The consumer listing of one broadcast subscription, behind a JDK-only contract: {@link #apply} takes the query
 * parameters and returns the response as maps, lists, strings and numbers. The HTTP servlet is loaded by a class
 * loader of its own and cannot cast to this class; it finds the subscription through stock types and calls it as a
 * {@link Function} ({@link BroadcastSubscription} delegates here).
 *
 * <p>Threading: runs on the web thread that asks; it reads only what other threads publish for it: the membership
 * map (concurrent), each consumer's volatile state, acknowledged and sent positions, permits and times, and the
 * ledger list (a snapshot, {@link EntryOffsets}). Nothing runs on, or waits for, the dispatch thread. The rows are
 * not one atomic snapshot of the subscription: each consumer's values are read once, one consumer after another.
 */
final class ConsumerListingSource implements Function<Map<String, String>, Map<String, Object>> {

    private static final Logger log = LoggerFactory.getLogger(ConsumerListingSource.class);

    private final BroadcastSubscription subscription;

    ConsumerListingSource(BroadcastSubscription subscription) {
        this.subscription = subscription;
    }

    /** @throws IllegalArgumentException when a parameter is bad (the message names it and what is allowed) */
    @Override
    public Map<String, Object> apply(Map<String, String> parameters) {
        ListingQuery query = ListingQuery.parse(parameters);
        BroadcastDispatcher dispatcher = subscription.broadcastDispatcher();
        long start = System.nanoTime();
        EntryOffsets offsets = dispatcher.entryOffsets();
        List<ConsumerRow> rows = new ArrayList<>(dispatcher.getConsumers().size());
        for (Consumer consumer : dispatcher.getConsumers()) {
            BroadcastConsumer bc = dispatcher.member(consumer);
            if (bc != null) {
                rows.add(row(consumer, bc, offsets));
            }
        }
        Map<String, Object> header = new LinkedHashMap<>();
        header.put("topic", subscription.getTopicName());
        header.put("subscription", subscription.getName());
        header.put("retained", dispatcher.parkedCount());
        Map<String, Object> response = ConsumerListing.answer(query, rows, header, ConsumerListingSource::details);
        if (log.isDebugEnabled()) {
            log.debug("[{}][{}] Listed {} of {} consumers in {} us", subscription.getTopicName(),
                    subscription.getName(), ((List<?>) response.get("consumers")).size(), rows.size(),
                    (System.nanoTime() - start) / 1000);
        }
        return response;
    }

    private static ConsumerRow row(Consumer consumer, BroadcastConsumer bc, EntryOffsets offsets) {
        PositionImpl acknowledged = bc.cursor().acknowledged();
        PositionImpl sent = bc.cursor().highestSent();
        return new ConsumerRow(bc.name(), bc.consumerId(), ListingQuery.State.valueOf(bc.state().name()),
                acknowledged.getLedgerId(), acknowledged.getEntryId(), sent.getLedgerId(), sent.getEntryId(),
                offsets.lag(acknowledged), Math.max(bc.cursor().sending.permits(), 0), bc.lastAckedMillis(),
                bc.lastSentMillis(), bc.messagesSent(), System.identityHashCode(bc), consumer);
    }

    /** Address (as stock stats show it), connected since and client version, from the stock consumer's stats. */
    private static void details(ConsumerRow row) {
        ConsumerStatsImpl stats = ((Consumer) row.source()).getStats();
        row.details(stats.getAddress(), stats.getConnectedSince(), stats.getClientVersion());
    }
}
