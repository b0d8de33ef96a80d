package io.github.pulsarbroadcast.broadcast.dispatch;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertNull;
import static org.testng.Assert.assertSame;
import static org.testng.Assert.assertTrue;

import java.lang.reflect.Proxy;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.TreeSet;
import java.util.function.Consumer;
import org.apache.bookkeeper.mledger.AsyncCallbacks.ReadEntriesCallback;
import org.apache.bookkeeper.mledger.Entry;
import org.apache.bookkeeper.mledger.ManagedCursor;
import org.apache.bookkeeper.mledger.ManagedLedgerException;
import org.apache.bookkeeper.mledger.ManagedLedgerException.NonRecoverableLedgerException;
import org.apache.bookkeeper.mledger.impl.EntryImpl;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.testng.annotations.BeforeMethod;
import org.testng.annotations.Test;

/**
 * {@link TerminatedLedgerReplay}'s read through its reader cursor keeps the replay's contract: every wanted entry, in
 * order, or a failure, never a short answer (which {@link CatchUpReads} would take as positions deleted, a loss); a
 * read that stops short (the managed cursor hands over what it read before a failure as a success) goes on from where
 * it stopped, and the failure that stopped it is the one reported; entries deleted since the read began are released;
 * the reader is deleted exactly once on every path, and every entry not handed over is released. The reader is a
 * scripted {@link ManagedCursor}: each call answers with the next script step.
 *
 * <p>Threading: the test thread plays the managed ledger's threads.
 */
public class TerminatedLedgerReplayTest {

    private static final long L = 7;

    private final Deque<Consumer<ReadEntriesCallback>> script = new ArrayDeque<>();
    private final List<Entry> created = new ArrayList<>();
    private int calls;
    private int deletes;
    /** The positions handed over (the entries themselves are released at once), or null. */
    private List<PositionImpl> answered;
    private ManagedLedgerException failed;

    @BeforeMethod(alwaysRun = true)
    public void reset() {
        script.clear();
        created.clear();
        calls = 0;
        deletes = 0;
        answered = null;
        failed = null;
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void aWholeAnswerIsHandedOverInOrder() {
        script.add(cb -> cb.readEntriesComplete(entries(0, 1, 2), null));
        read(0, 1, 2);
        assertEquals(answered, List.of(p(0), p(1), p(2)));
        assertEquals(deletes, 1);
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void aShortAnswerIsContinuedFromWhereItStopped() {
        script.add(cb -> cb.readEntriesComplete(entries(0, 1), null));
        script.add(cb -> cb.readEntriesComplete(entries(2, 3), null));
        read(0, 1, 2, 3);
        assertEquals(calls, 2);
        assertEquals(answered, List.of(p(0), p(1), p(2), p(3)));
        assertEquals(deletes, 1);
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void aContinuationThatReturnsNothingFailsTheReadAndReleasesWhatWasRead() {
        script.add(cb -> cb.readEntriesComplete(entries(0, 1), null));
        script.add(cb -> cb.readEntriesComplete(new ArrayList<>(), null));
        read(0, 1, 2);
        assertNull(answered, "never a short answer");
        assertTrue(failed.getMessage().contains("Read 2 of the 3 entries"), failed.getMessage());
        assertEverythingReleased();
        assertEquals(deletes, 1);
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void theFailureThatStoppedAShortReadIsTheOneReported() {
        NonRecoverableLedgerException lost = new NonRecoverableLedgerException("ledger 8 is gone");
        script.add(cb -> cb.readEntriesComplete(entries(0, 1), null)); // what was read before the failure
        script.add(cb -> cb.readEntriesFailed(lost, null));
        read(0, 1, 2);
        assertSame(failed, lost, "CatchUpReads skips it when autoSkipNonRecoverableData is set, as stock's replay");
        assertEverythingReleased();
        assertEquals(deletes, 1);
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void entriesDeletedSinceTheReadBeganAreReleasedNotHandedOver() {
        script.add(cb -> cb.readEntriesComplete(entries(0, 1, 2), null));
        read(0, 2); // 1 was deleted from the subscription
        assertEquals(answered, List.of(p(0), p(2)));
        assertEquals(((EntryImpl) created.get(1)).refCnt(), 0, "the unwanted entry is released");
        assertEquals(deletes, 1);
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void aFirstCallThatThrowsDeletesTheReaderAndThrows() {
        script.add(cb -> {
            throw new NullPointerException("currentLedger");
        });
        try {
            read(0, 1);
            throw new AssertionError("expected the throw");
        } catch (NullPointerException expected) {
            assertEquals(deletes, 1);
            assertNull(answered);
            assertNull(failed);
        }
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void aContinuationThatThrowsFailsTheRead() {
        script.add(cb -> cb.readEntriesComplete(entries(0), null));
        script.add(cb -> {
            throw new IllegalStateException("closed");
        });
        read(0, 1);
        assertTrue(failed.getMessage().contains("closed"), failed.getMessage());
        assertEverythingReleased();
        assertEquals(deletes, 1);
    }

    private void read(long... wantedEntries) {
        TreeSet<PositionImpl> wanted = new TreeSet<>();
        for (long e : wantedEntries) {
            wanted.add(p(e));
        }
        int span = (int) (wanted.last().getEntryId() - wanted.first().getEntryId() + 1);
        TerminatedLedgerReplay.read(scriptedReader(), wanted, span, new ReadEntriesCallback() {
            @Override
            public void readEntriesComplete(List<Entry> entries, Object ctx) {
                answered = positions(entries);
                entries.forEach(Entry::release);
            }

            @Override
            public void readEntriesFailed(ManagedLedgerException e, Object ctx) {
                failed = e;
            }
        }, () -> deletes++);
    }

    /** A reader whose {@code asyncReadEntries(n, callback, ctx, max)} plays the next script step. */
    private ManagedCursor scriptedReader() {
        return (ManagedCursor) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {ManagedCursor.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("asyncReadEntries") && args.length == 4) {
                        calls++;
                        script.removeFirst().accept((ReadEntriesCallback) args[1]);
                        return null;
                    }
                    if (method.getName().equals("getName")) {
                        return "reader";
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
    }

    private List<Entry> entries(long... ids) {
        List<Entry> out = new ArrayList<>();
        for (long id : ids) {
            Entry e = TestEntries.entry(L, id, 1);
            created.add(e);
            out.add(e);
        }
        return out;
    }

    private void assertEverythingReleased() {
        for (Entry e : created) {
            assertEquals(((EntryImpl) e).refCnt(), 0, "entry " + e.getPosition() + " not released");
        }
    }

    private static PositionImpl p(long entry) {
        return PositionImpl.get(L, entry);
    }

    private static List<PositionImpl> positions(List<Entry> entries) {
        List<PositionImpl> out = new ArrayList<>();
        for (Entry e : entries) {
            out.add(PositionImpl.get(e.getLedgerId(), e.getEntryId()));
        }
        return out;
    }
}
