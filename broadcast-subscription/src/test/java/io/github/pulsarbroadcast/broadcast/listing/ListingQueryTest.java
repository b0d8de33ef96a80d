package io.github.pulsarbroadcast.broadcast.listing;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertTrue;
import static org.testng.Assert.expectThrows;

import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastConsumer;
import java.util.EnumSet;
import java.util.Map;
import org.testng.annotations.Test;

/** Parsing and checking the listing's query parameters: defaults, every value, and a message for every refusal. */
@Test(groups = "unit")
public class ListingQueryTest {

    @Test(timeOut = 10_000)
    public void defaults() {
        ListingQuery q = ListingQuery.defaults();
        assertEquals(q.sort(), ListingQuery.Sort.LAG);
        assertTrue(q.descending(), "lag: most behind first");
        assertTrue(q.allStates());
        assertEquals(q.offset(), 0);
        assertEquals(q.limit(), 20);
        ListingQuery byName = ListingQuery.parse(Map.of("sort", "name"));
        assertFalse(byName.descending(), "name: A to Z");
        assertFalse(ListingQuery.parse(Map.of("sort", "lastAcked")).descending(), "last ack: oldest first");
    }

    @Test(timeOut = 10_000)
    public void everyValue() {
        ListingQuery q = ListingQuery.parse(Map.of("sort", "LAG", "order", "Asc", "state", "waiting, catching-up",
                "offset", "10000", "limit", "1000", "authoritative", "true"));
        assertEquals(q.sort(), ListingQuery.Sort.LAG);
        assertFalse(q.descending());
        assertEquals(q.states(), EnumSet.of(ListingQuery.State.WAITING, ListingQuery.State.CATCHING_UP));
        assertEquals(q.offset(), 10_000);
        assertEquals(q.limit(), 1000);
        assertEquals(ListingQuery.parse(Map.of("sort", "lastacked", "order", "desc")).sort(),
                ListingQuery.Sort.LAST_ACKED);
        assertEquals(q.describe().toString(),
                "{sort=lag, order=asc, state=[WAITING, CATCHING_UP], offset=10000, limit=1000}");
    }

    @Test(timeOut = 10_000)
    public void refusalsNameTheParameterAndWhatIsAllowed() {
        assertRefused(Map.of("sort", "age"), "'sort'", "lag, name, lastAcked");
        assertRefused(Map.of("order", "up"), "'order'", "asc, desc");
        assertRefused(Map.of("state", "SLEEPING"), "'state'", "IDLE, WAITING, PENDING, CATCHING_UP, REMOVED");
        assertRefused(Map.of("state", ","), "'state'", "IDLE");
        assertRefused(Map.of("limit", "0"), "'limit'", "from 1 to 1000");
        assertRefused(Map.of("limit", "1001"), "'limit'", "from 1 to 1000");
        assertRefused(Map.of("limit", "ten"), "'limit'", "from 1 to 1000");
        assertRefused(Map.of("offset", "-1"), "'offset'", "from 0 to 2147483647");
        assertRefused(Map.of("offset", "99999999999"), "'offset'", "from 0 to 2147483647");
        assertRefused(Map.of("sortBy", "lag"), "'sortBy'", "sort, order, state, offset, limit");
    }

    /** The listing's state names are the dispatcher's. */
    @Test(timeOut = 10_000)
    public void statesAreTheDispatchersStates() {
        for (BroadcastConsumer.State s : BroadcastConsumer.State.values()) {
            assertEquals(ListingQuery.State.valueOf(s.name()).name(), s.name());
        }
        assertEquals(ListingQuery.State.values().length, BroadcastConsumer.State.values().length);
    }

    private static void assertRefused(Map<String, String> parameters, String... expected) {
        IllegalArgumentException e = expectThrows(IllegalArgumentException.class,
                () -> ListingQuery.parse(parameters));
        for (String part : expected) {
            assertTrue(e.getMessage().contains(part), parameters + " -> " + e.getMessage());
        }
    }
}
