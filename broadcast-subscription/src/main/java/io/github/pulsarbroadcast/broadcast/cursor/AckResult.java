package io.github.pulsarbroadcast.broadcast.cursor;

/** The outcome of applying one acknowledgement to a {@link VirtualCursor}. */
public enum AckResult {
    /** The cumulative position moved forward. */
    ADVANCED,
    /** An individual ack above the cumulative position, kept until the gap below it closes. */
    RECORDED,
    /** Already acknowledged (at or below the cumulative position, or recorded before): nothing changed. */
    DUPLICATE,
    /**
     * An individual ack that would need more acknowledgement ranges than the consumer may hold
     * ({@code broadcastMaxAckRangesPerConsumer}): not recorded, so the message counts as unacknowledged and is sent
     * again on the consumer's next redelivery or reconnect.
     */
    DROPPED,
    /** The position was never sent to this consumer (or is past the end of the topic): rejected. */
    NOT_SENT
}
