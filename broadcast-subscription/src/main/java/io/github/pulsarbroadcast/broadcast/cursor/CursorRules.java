package io.github.pulsarbroadcast.broadcast.cursor;

/**
 * What every virtual cursor of one subscription shares: the order of the topic's entries, the bound on
 * individually acknowledged ranges per consumer, and the positions no consumer is sent.
 *
 * <p>Threading: immutable (the {@link WithheldPositions} it holds is thread-safe); any thread.
 */
public final class CursorRules {

    private final PositionSequence sequence;
    private final int maxAckRanges;
    private final WithheldPositions withheld = new WithheldPositions();

    public CursorRules(PositionSequence sequence, int maxAckRanges) {
        if (maxAckRanges < 1) {
            throw new IllegalArgumentException("maxAckRanges must be at least 1, not " + maxAckRanges);
        }
        this.sequence = sequence;
        this.maxAckRanges = maxAckRanges;
    }

    public PositionSequence sequence() {
        return sequence;
    }

    public WithheldPositions withheld() {
        return withheld;
    }

    public int maxAckRanges() {
        return maxAckRanges;
    }
}
