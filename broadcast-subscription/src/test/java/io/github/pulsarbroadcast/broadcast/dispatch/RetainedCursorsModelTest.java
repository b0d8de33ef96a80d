package io.github.pulsarbroadcast.broadcast.dispatch;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertSame;
import static org.testng.Assert.assertTrue;
import static org.testng.Assert.fail;

import io.github.pulsarbroadcast.broadcast.cursor.CursorRules;
import io.github.pulsarbroadcast.broadcast.cursor.VirtualCursor;
import io.github.pulsarbroadcast.broadcast.positions.SavedPosition;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.apache.bookkeeper.mledger.impl.PositionImpl;
import org.testng.annotations.Test;

/**
 * A randomized model test of {@link RetainedCursors} and its {@link PositionTable}: random schedules of joins (named
 * and anonymous, fresh and resuming), leaves (retained or dropped), scans with a rising mark-delete and a moving
 * clock (which expire retained positions while the scan walks the rows it swaps), resets and drops of every retained
 * position, and restarts (every named position saved and restored into a new registry), and subscribes that wait
 * for a connected name to be released ({@code whenReleased}, {@code forgetRelease}: the busy-name wait, whose
 * lookups find their rows after the other steps moved them), checked after every step against a plain map of names:
 * a waiting task runs once, when its holder leaves, unless it was forgotten. A failure names its seed; rerun it with
 * {@code -Dbroadcast.retained.seed=<seed>}.
 *
 * <p>Threading: TestNG's test thread only.
 */
public class RetainedCursorsModelTest {

    private static final Long SEED = Long.getLong("broadcast.retained.seed");
    private static final int SCHEDULES = Integer.getInteger("broadcast.retained.schedules", 400);
    private static final long LEDGER = 5;
    private static final long WALL_MILLIS = 1_700_000_000_000L;
    /** Retention after a restore, connected or not: one second, longer than the rest of a schedule's clock. */
    private static final long RESTORED_NANOS = 1_000_000_000L;
    private static final CursorRules RULES = new CursorRules(p -> PositionImpl.get(p.getLedgerId(),
            p.getEntryId() + 1), 100);

    /** The reference: one name's position (or an anonymous consumer's). */
    private static final class Position {
        /** Null after a reset replaced it (then it starts at {@link #resetAt}) until its name resumes. */
        VirtualCursor cursor;
        long resetAt;
        BroadcastConsumer attached;
        long expiresAtNanos;
        /** Tasks waiting for this name's holder to leave, in the order they were registered. */
        final List<Runnable> waiting = new ArrayList<>();
    }

    /** A waiting subscribe's continuation: records that it ran. */
    private static final class Waiter implements Runnable {
        private final List<Runnable> ran;

        Waiter(List<Runnable> ran) {
            this.ran = ran;
        }

        @Override
        public void run() {
            ran.add(this);
        }
    }

    @Test(groups = "unit", timeOut = 120_000)
    public void randomSchedulesMatchTheReference() {
        long base = SEED != null ? SEED : 20261125L;
        int schedules = SEED != null ? 1 : SCHEDULES;
        for (int s = 0; s < schedules; s++) {
            long seed = base + s;
            try {
                run(new Random(seed));
            } catch (AssertionError | RuntimeException e) {
                throw new AssertionError("schedule failed; replay with -Dbroadcast.retained.seed=" + seed, e);
            }
        }
    }

    private static void run(Random rnd) {
        RetainedCursors cursors = new RetainedCursors();
        Map<String, Position> named = new HashMap<>();
        List<Position> anonymous = new ArrayList<>();
        long now = 1_000_000_000L;
        long markDeleted = 0;
        PositionScan scan = new PositionScan();
        List<Runnable> ran = new ArrayList<>();
        List<BroadcastConsumer> former = new ArrayList<>();
        for (int step = 0; step < 300; step++) {
            int op = rnd.nextInt(100);
            if (op < 32) {
                String name = rnd.nextInt(5) == 0 ? "" : "car-" + rnd.nextInt(40);
                join(cursors, named, anonymous, name, markDeleted + rnd.nextInt(20));
            } else if (op < 55) {
                leave(cursors, named, anonymous, rnd, now + rnd.nextInt(5_000), ran, former);
            } else if (op < 60) {
                waitFor(cursors, named, rnd, ran, former);
            } else if (op < 63) {
                forget(cursors, named, rnd);
            } else if (op < 90) {
                now += rnd.nextInt(3_000);
                markDeleted += rnd.nextInt(4);
                checkScan(cursors, named, anonymous, now, markDeleted, scan);
            } else if (op < 95) {
                long at = markDeleted + rnd.nextInt(10);
                long until = now + rnd.nextInt(5_000);
                cursors.restartAll(PositionImpl.get(LEDGER, at), RULES, now, until);
                long resetNow = now;
                named.values().removeIf(p -> p.attached == null && p.expiresAtNanos - resetNow < 0);
                for (Position p : named.values()) {
                    if (p.attached == null) {
                        p.cursor = null; // replaced by the reset
                        p.resetAt = at;
                        p.expiresAtNanos = until;
                    }
                }
            } else if (op < 98) {
                cursors.dropRetained();
                named.values().removeIf(p -> p.attached == null);
            } else {
                cursors = restoredCopy(cursors, named, anonymous, now, markDeleted);
            }
            checkCounts(cursors, named, anonymous, now);
            assertEquals(ran, List.of(), "a waiting task ran while its holder stayed");
        }
    }

    /**
     * A subscribe waits for a connected name (it gets a task to run when the holder leaves); now and then one asks
     * about a consumer that already left, which is refused (the caller then retries the subscribe at once).
     */
    private static void waitFor(RetainedCursors cursors, Map<String, Position> named, Random rnd, List<Runnable> ran,
                                List<BroadcastConsumer> former) {
        Waiter task = new Waiter(ran);
        if (!former.isEmpty() && rnd.nextInt(4) == 0) {
            // a consumer that left never comes back (a rejoin is a new consumer), whoever holds its name now
            BroadcastConsumer gone = former.get(rnd.nextInt(former.size()));
            assertFalse(cursors.whenReleased(gone, task), "a wait on a holder that left");
            return;
        }
        List<Position> holders = new ArrayList<>();
        named.forEach((name, p) -> {
            if (!name.isEmpty() && p.attached != null) {
                holders.add(p);
            }
        });
        if (holders.isEmpty()) {
            return;
        }
        Position p = holders.get(rnd.nextInt(holders.size()));
        assertTrue(cursors.whenReleased(p.attached, task), "a wait on " + p.attached.name);
        p.waiting.add(task);
    }

    /** A waiting subscribe gives up (its client went away or its time ran out). */
    private static void forget(RetainedCursors cursors, Map<String, Position> named, Random rnd) {
        List<Position> withWaiters = new ArrayList<>();
        named.values().stream().filter(p -> !p.waiting.isEmpty()).forEach(withWaiters::add);
        if (withWaiters.isEmpty()) {
            return;
        }
        Position p = withWaiters.get(rnd.nextInt(withWaiters.size()));
        Runnable task = p.waiting.remove(rnd.nextInt(p.waiting.size()));
        cursors.forgetRelease(p.attached, task);
    }

    /**
     * A broker restart: the named positions saved and restored into a new registry, every one of them retained (a
     * restored name's row is found again by its name, so a row given the wrong index shows as another name's
     * position); anonymous consumers are gone.
     */
    private static RetainedCursors restoredCopy(RetainedCursors cursors, Map<String, Position> named,
                                                List<Position> anonymous, long now, long markDeleted) {
        List<SavedPosition> saved = cursors.save(now, WALL_MILLIS, Integer.MAX_VALUE, null);
        RetainedCursors restored = new RetainedCursors();
        int expired = restored.restore(saved, now, WALL_MILLIS, RESTORED_NANOS, RESTORED_NANOS,
                PositionImpl.get(LEDGER, markDeleted), RULES);
        assertEquals(expired, 0, "restored positions that had expired");
        anonymous.clear();
        for (Position p : named.values()) {
            long acked = p.cursor == null ? p.resetAt : p.cursor.acknowledged().getEntryId();
            p.waiting.clear(); // the old broker's waiting subscribes are gone with it
            p.cursor = null; // a new cursor that starts at resetAt
            p.resetAt = Math.max(acked, markDeleted);
            p.attached = null;
            p.expiresAtNanos = now + RESTORED_NANOS;
        }
        return restored;
    }

    private static void join(RetainedCursors cursors, Map<String, Position> named, List<Position> anonymous,
                             String name, long entry) {
        Position p = name.isEmpty() ? new Position() : named.get(name);
        try {
            BroadcastConsumer bc = cursors.attach(name, () -> new VirtualCursor(PositionImpl.get(LEDGER, entry), RULES),
                    (cursor, resumed) -> new BroadcastConsumer(null, 1, name, null, cursor, false, 0, resumed));
            assertTrue(p == null || p.attached == null, "attached a name that is connected: " + name);
            assertEquals(bc.resumed, p != null && !name.isEmpty(), "resumed " + name);
            if (p == null) {
                p = new Position();
                named.put(name, p);
            } else if (!name.isEmpty() && p.cursor != null) {
                assertSame(bc.cursor, p.cursor, "a resumed name gets its own position back");
            } else if (!name.isEmpty()) {
                assertEquals(bc.cursor.acknowledged().getEntryId(), p.resetAt, "a name resumed after a reset");
            }
            p.cursor = bc.cursor;
            p.attached = bc;
            if (name.isEmpty()) {
                anonymous.add(p);
            }
        } catch (RetainedCursors.NameBusyException e) {
            assertTrue(p != null && p.attached != null, "refused a free name " + name);
            assertSame(e.holder, p.attached);
        }
    }

    private static void leave(RetainedCursors cursors, Map<String, Position> named, List<Position> anonymous,
                              Random rnd, long until, List<Runnable> ran, List<BroadcastConsumer> former) {
        List<Position> connected = new ArrayList<>(anonymous);
        named.values().stream().filter(p -> p.attached != null).forEach(connected::add);
        if (connected.isEmpty()) {
            return;
        }
        Position p = connected.get(rnd.nextInt(connected.size()));
        boolean retain = rnd.nextBoolean();
        cursors.detach(p.attached, retain, until);
        assertEquals(ran, p.waiting, "the tasks waiting for " + p.attached.name + " ran once each, in order");
        ran.clear();
        p.waiting.clear();
        former.add(p.attached);
        if (p.attached.name.isEmpty()) {
            anonymous.remove(p);
        } else if (retain) {
            p.expiresAtNanos = until;
        } else {
            named.remove(p.attached.name);
        }
        p.attached = null;
    }

    private static void checkScan(RetainedCursors cursors, Map<String, Position> named, List<Position> anonymous,
                                  long now, long markDeleted, PositionScan scan) {
        int expired = named.size();
        named.values().removeIf(p -> p.attached == null && p.expiresAtNanos - now < 0);
        expired -= named.size();
        List<Position> all = new ArrayList<>(named.values());
        all.addAll(anonymous);
        long lowest = Long.MAX_VALUE;
        Set<BroadcastConsumer> moved = new HashSet<>();
        for (Position p : all) {
            long acked = p.cursor == null ? p.resetAt : p.cursor.acknowledged().getEntryId();
            if (acked >= 0 && acked < markDeleted && p.attached != null) {
                moved.add(p.attached);
            }
            lowest = Math.min(lowest, Math.max(acked, markDeleted));
        }
        cursors.scan(PositionImpl.get(LEDGER, markDeleted), now, scan);
        assertEquals(scan.expired, expired, "expired positions");
        assertEquals(new HashSet<>(scan.movedForward), moved, "connected consumers moved forward");
        if (all.isEmpty()) {
            assertEquals(scan.lowestAcknowledged, null);
            return;
        }
        assertEquals(scan.lowestAcknowledged.getEntryId(), lowest, "lowest acknowledged position");
        for (Position p : all) {
            if (p.cursor == null) {
                p.resetAt = Math.max(p.resetAt, markDeleted); // the scan moved it up too
            }
        }
    }

    private static void checkCounts(RetainedCursors cursors, Map<String, Position> named, List<Position> anonymous,
                                    long now) {
        long connectedNamed = named.values().stream().filter(p -> p.attached != null).count();
        assertEquals(cursors.attachedCount(), connectedNamed + anonymous.size(), "attached");
        assertEquals(cursors.retainedCount(), named.size() - connectedNamed, "retained");
        Set<String> saved = new HashSet<>();
        for (SavedPosition p : cursors.save(now, WALL_MILLIS, Integer.MAX_VALUE, null)) {
            if (!saved.add(p.name())) {
                fail("saved twice: " + p.name());
            }
            assertEquals(p.retainedUntilMillis() == 0, named.get(p.name()).attached != null, "retention of "
                    + p.name());
        }
        named.forEach((name, p) -> assertEquals(cursors.waitingFor(name), p.waiting.size(), "waiting for " + name));
        assertEquals(saved, named.keySet(), "saved names");
        EntryOffsets offsets = EntryOffsets.of(new java.util.TreeMap<>(Map.of(LEDGER, 1_000L)),
                PositionImpl.get(LEDGER, 999));
        assertEquals(cursors.lags(offsets).length, named.size() + anonymous.size(), "lags");
    }
}
