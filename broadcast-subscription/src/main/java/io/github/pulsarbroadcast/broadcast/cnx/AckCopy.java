package io.github.pulsarbroadcast.broadcast.cnx;

import io.github.pulsarbroadcast.broadcast.cursor.AckResult;
import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastConsumer;
import org.apache.pulsar.common.api.proto.CommandAck;
import org.apache.pulsar.common.api.proto.MessageIdData;
import org.apache.pulsar.common.api.proto.ServerError;
import org.apache.pulsar.common.protocol.Commands;

/**
 * What the plugin needs of one ack command, copied off the decoder's reused {@link CommandAck} so it can be applied
 * on another thread.
 *
 * <p>A message id carrying an ack set acknowledges only part of a batch; the entry stays unacknowledged until a
 * whole-entry ack comes (Pulsar clients send that once every message of the batch is acknowledged). A cumulative one
 * acknowledges the entries before it ({@link #entryToAcknowledge}).
 *
 * <p>Threading: immutable after {@link #of}; {@link #applyTo} runs once, on any thread. {@link #apply} applies
 * the decoder's command without a copy and runs on the connection's event loop (the command is reused after it).
 */
final class AckCopy {

    private final boolean cumulative;
    private final long[] ledgerIds;
    private final long[] entryIds;
    /** -1 when the client asked for no receipt. */
    private final long requestId;
    private final boolean transactional;

    private AckCopy(boolean cumulative, long[] ledgerIds, long[] entryIds, long requestId, boolean transactional) {
        this.cumulative = cumulative;
        this.ledgerIds = ledgerIds;
        this.entryIds = entryIds;
        this.requestId = requestId;
        this.transactional = transactional;
    }

    static AckCopy of(CommandAck ack) {
        boolean cumulative = ack.getAckType() == CommandAck.AckType.Cumulative;
        int n = 0;
        for (int i = 0; i < ack.getMessageIdsCount(); i++) {
            if (entryToAcknowledge(ack.getMessageIdAt(i), cumulative) != NONE) {
                n++;
            }
        }
        long[] ledgers = new long[n];
        long[] entries = new long[n];
        int j = 0;
        for (int i = 0; i < ack.getMessageIdsCount(); i++) {
            MessageIdData id = ack.getMessageIdAt(i);
            long entry = entryToAcknowledge(id, cumulative);
            if (entry != NONE) {
                ledgers[j] = id.getLedgerId();
                entries[j++] = entry;
            }
        }
        return new AckCopy(cumulative, ledgers, entries, ack.hasRequestId() ? ack.getRequestId() : -1,
                ack.hasTxnidMostBits());
    }

    /** {@link #entryToAcknowledge}: nothing to acknowledge. */
    private static final long NONE = -2;

    /**
     * The entry of {@code id}'s ledger to acknowledge, or {@link #NONE}. An id with an ack set names part of a batch:
     * individually it acknowledges nothing; cumulatively, every entry before its own (as stock's cursor takes it, the
     * Java client's cumulative ack inside a batch with batch-index acks on: regression, forty-second session's
     * review, the position did not move at all). In a ledger's first entry that is -1: the engine takes the entry
     * before from the ledger, as stock's cursor does (regression, forty-third session: it acknowledged nothing).
     */
    static long entryToAcknowledge(MessageIdData id, boolean cumulative) {
        if (id.getAckSetsCount() == 0) {
            return id.getEntryId();
        }
        return cumulative ? id.getEntryId() - 1 : NONE;
    }

    /** Applies the acks to the consumer's virtual cursor and answers the client if it asked for a receipt. */
    void applyTo(BroadcastConsumer consumer, BroadcastServerCnx cnx) {
        String error = null;
        if (transactional) {
            error = TRANSACTIONAL;
        } else {
            for (int i = 0; i < ledgerIds.length; i++) {
                String e = acknowledge(consumer, ledgerIds[i], entryIds[i], cumulative);
                error = e == null ? error : e;
            }
        }
        answer(requestId, error, consumer, cnx);
    }

    /**
     * Applies an ack command straight from the decoder's {@code ack}, on the connection's event loop (no copy): what
     * {@code of(ack).applyTo(consumer, cnx)} does, without the copy.
     */
    static void apply(CommandAck ack, BroadcastConsumer consumer, BroadcastServerCnx cnx) {
        String error = null;
        if (ack.hasTxnidMostBits()) {
            error = TRANSACTIONAL;
        } else {
            boolean cumulative = ack.getAckType() == CommandAck.AckType.Cumulative;
            for (int i = 0; i < ack.getMessageIdsCount(); i++) {
                MessageIdData id = ack.getMessageIdAt(i);
                long entry = entryToAcknowledge(id, cumulative);
                if (entry != NONE) {
                    String e = acknowledge(consumer, id.getLedgerId(), entry, cumulative);
                    error = e == null ? error : e;
                }
            }
        }
        answer(ack.hasRequestId() ? ack.getRequestId() : -1, error, consumer, cnx);
    }

    private static final String TRANSACTIONAL =
            "Transactional acknowledgements are not supported on a broadcast subscription";

    /** One acknowledgement; the error to answer with, or null. */
    private static String acknowledge(BroadcastConsumer consumer, long ledgerId, long entryId, boolean cumulative) {
        if (consumer.acknowledge(ledgerId, entryId, cumulative) == AckResult.NOT_SENT) {
            return "Ack of " + ledgerId + ":" + entryId + " refused: that message was never sent to this consumer";
        }
        return null;
    }

    private static void answer(long requestId, String error, BroadcastConsumer consumer, BroadcastServerCnx cnx) {
        if (requestId >= 0) {
            cnx.ctx().writeAndFlush(Commands.newAckResponse(requestId, error == null ? null
                    : ServerError.NotAllowedError, error, consumer.consumerId()));
        }
    }
}
