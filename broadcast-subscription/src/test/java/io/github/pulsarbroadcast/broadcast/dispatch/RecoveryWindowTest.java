package io.github.pulsarbroadcast.broadcast.dispatch;

import static org.testng.Assert.assertEquals;

import io.github.pulsarbroadcast.broadcast.positions.JoinFloor;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.testng.annotations.Test;

/**
 * {@link RecoveryWindow}'s join floor for a save: the end of an open window, on the wall clock and rounded up to the
 * millisecond, only for the save made on close (twenty-ninth session; the next owner keeps the window until then),
 * and where {@code Latest} joins start, inside the window and after it.
 *
 * <p>Threading: TestNG's test thread only.
 */
public class RecoveryWindowTest {

    private static final long MS = 1_000_000L;

    @Test(groups = "unit", timeOut = 10_000)
    public void aClosingSaveCarriesWhatIsLeftOfAnOpenWindowRoundedUp() {
        ModelLedger ledger = new ModelLedger(3, 4);
        long[] now = {1_000 * MS};
        RecoveryWindow window = new RecoveryWindow(ledger, () -> now[0], 10_000 * MS);
        PositionImpl markDeleted = ledger.markDeleted();
        window.open(new JoinFloor(markDeleted.getLedgerId(), markDeleted.getEntryId()));
        now[0] += 4_000 * MS - 1;
        JoinFloor closing = window.joinFloor(true, 50_000);
        assertEquals(closing.windowEndMillis(), 56_001, "6 s and a nanosecond left, rounded up");
        assertEquals(PositionImpl.get(closing.ledgerId(), closing.entryId()), markDeleted, "the window's start");
        assertEquals(window.joinFloor(false, 50_000).windowEndMillis(), 0, "a periodic save carries no end");
        assertEquals(window.joinFloor().windowEndMillis(), 0);
        now[0] += 6_000 * MS + 1;
        JoinFloor after = window.joinFloor(true, 56_001);
        assertEquals(after.windowEndMillis(), 0, "the window has ended");
        PositionImpl tail = ledger.lastConfirmed();
        assertEquals(PositionImpl.get(after.ledgerId(), after.entryId()), tail, "Latest joins start at the tail");
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void aWindowOpenedForWhatWasLeftEndsThen() {
        ModelLedger ledger = new ModelLedger(3, 4);
        long[] now = {0};
        RecoveryWindow window = new RecoveryWindow(ledger, () -> now[0], 60_000 * MS);
        window.open(null, 2_500 * MS);
        now[0] = 2_500 * MS - 1;
        assertEquals(window.isOpen(), true);
        now[0] = 2_500 * MS;
        assertEquals(window.isOpen(), false);
        long grace = 60_000 * MS;
        assertEquals(SubscriptionStart.windowLeftNanos(new JoinFloor(1, 2, 10_000), 7_500, grace), 2_500 * MS);
        assertEquals(SubscriptionStart.windowLeftNanos(new JoinFloor(1, 2, 10_000), 12_000, grace), 0, "ended");
        assertEquals(SubscriptionStart.windowLeftNanos(new JoinFloor(1, 2), 7_500, grace), -1, "saved outside one");
        assertEquals(SubscriptionStart.windowLeftNanos(null, 7_500, grace), -1);
        // A clock far behind the previous owner's (or a damaged end) keeps the window a whole grace at most.
        assertEquals(SubscriptionStart.windowLeftNanos(new JoinFloor(1, 2, Long.MAX_VALUE), 7_500, grace), grace);
        assertEquals(SubscriptionStart.windowLeftNanos(new JoinFloor(1, 2, 10_000_000), 0, grace), grace);
    }

    /**
     * Whether a name the subscription does not know may be a consumer that was attached: in a window a load or a
     * reopen opened, also after a reset inside it; not in one a reset opened alone, nor after a window ended.
     */
    @Test(groups = "unit", timeOut = 10_000)
    public void onlyAWindowALoadOpenedMayHaveUnknownAttachedConsumers() {
        ModelLedger ledger = new ModelLedger(3, 4);
        long[] now = {0};
        RecoveryWindow window = new RecoveryWindow(ledger, () -> now[0], 10_000 * MS);
        assertEquals(window.mayHaveUnknownAttached(), false, "closed");
        window.openAfterReset(false);
        assertEquals(window.isOpen(), true);
        assertEquals(window.mayHaveUnknownAttached(), false, "a reset restarted every position it knew");
        window.open(null);
        assertEquals(window.mayHaveUnknownAttached(), true, "a load without a save made on close");
        now[0] += 5_000 * MS;
        window.openAfterReset(false);
        assertEquals(window.mayHaveUnknownAttached(), true, "a reset inside it keeps what the load's window said");
        now[0] += 10_000 * MS;
        assertEquals(window.mayHaveUnknownAttached(), false, "ended");
        window.openAfterReset(false);
        assertEquals(window.mayHaveUnknownAttached(), false, "a reset after it ended");
        window.openAfterReset(true);
        assertEquals(window.mayHaveUnknownAttached(), true, "no position kept for the consumers it disconnected");
        // A save on close carries the kind of window to the next owner, which opens what is left of it.
        assertEquals(window.joinFloor(true, 50_000).windowAfterReset(), false);
        now[0] += 10_000 * MS; // that window ends
        window.openAfterReset(false);
        JoinFloor carried = window.joinFloor(true, 50_000);
        assertEquals(carried.windowAfterReset(), true, "a window a reset opened alone");
        assertEquals(window.joinFloor(false, 50_000).windowAfterReset(), false, "only a save on close carries it");
        RecoveryWindow next = new RecoveryWindow(ledger, () -> now[0], 10_000 * MS);
        next.open(carried, 4_000 * MS);
        assertEquals(next.mayHaveUnknownAttached(), false, "carried over a graceful move");
        next.open(carried);
        assertEquals(next.mayHaveUnknownAttached(), true, "a whole window (a crash's): the floor's kind is ignored");
    }
}
