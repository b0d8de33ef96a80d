package io.github.pulsarbroadcast.broadcast.listing;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertNull;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.testng.annotations.Test;

/** Sorting, filtering and paging of the consumer listing, without a broker. */
@Test(groups = "unit")
public class ConsumerListingTest {

    private static ConsumerRow row(String name, long id, ListingQuery.State state, long lag, long lastAcked) {
        return new ConsumerRow(name, id, state, 7, 100 - lag, 7, 100, lag, 5, lastAcked, 0, 0, id, null);
    }

    private static List<String> names(Map<String, Object> answer) {
        List<String> names = new ArrayList<>();
        for (Object o : (List<?>) answer.get("consumers")) {
            names.add((String) ((Map<?, ?>) o).get("name"));
        }
        return names;
    }

    private static Map<String, Object> answer(Map<String, String> parameters, List<ConsumerRow> rows) {
        return ConsumerListing.answer(ListingQuery.parse(parameters), rows, Map.of("topic", "t"),
                r -> r.details("127.0.0.1:1", "since", "v"));
    }

    @Test(timeOut = 10_000)
    public void sortsByLagMostBehindFirstThenByName() {
        List<ConsumerRow> rows = List.of(row("b", 1, ListingQuery.State.WAITING, 0, 5),
                row("a", 2, ListingQuery.State.WAITING, 0, 5), row("slow", 3, ListingQuery.State.IDLE, 40, 1),
                row("slower", 4, ListingQuery.State.CATCHING_UP, 90, 0));
        assertEquals(names(answer(Map.of(), rows)), List.of("slower", "slow", "a", "b"));
        assertEquals(names(answer(Map.of("order", "asc"), rows)), List.of("a", "b", "slow", "slower"));
        assertEquals(names(answer(Map.of("sort", "name", "order", "desc"), rows)),
                List.of("slower", "slow", "b", "a"));
        assertEquals(names(answer(Map.of("sort", "lastAcked"), rows)), List.of("slower", "slow", "a", "b"));
    }

    @Test(timeOut = 10_000)
    public void filtersByStateAndCountsWhatMatches() {
        List<ConsumerRow> rows = List.of(row("w", 1, ListingQuery.State.WAITING, 0, 5),
                row("i", 2, ListingQuery.State.IDLE, 3, 5), row("c", 3, ListingQuery.State.CATCHING_UP, 9, 5));
        Map<String, Object> a = answer(Map.of("state", "idle,catching_up"), rows);
        assertEquals(names(a), List.of("c", "i"));
        assertEquals(a.get("total"), 2);
        assertEquals(a.get("connected"), 3);
        assertEquals(a.get("topic"), "t");
        Map<?, ?> first = (Map<?, ?>) ((List<?>) a.get("consumers")).get(0);
        assertEquals(first.get("state"), "CATCHING_UP");
        assertEquals(first.get("acknowledged"), "7:91");
        assertEquals(first.get("sent"), "7:100");
        assertEquals(first.get("lag"), 9L);
        assertEquals(first.get("address"), "127.0.0.1:1");
    }

    /** 10,000 rows with many equal lags: the pages together are every row exactly once, in order. */
    @Test(timeOut = 20_000)
    public void pagesCoverEveryRowOnceAndFillOnlyThePage() {
        Random random = new Random(42);
        List<ConsumerRow> rows = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            rows.add(row("c" + random.nextInt(500), i, ListingQuery.State.WAITING, random.nextInt(10), 0));
        }
        Set<Long> seen = new HashSet<>();
        List<Long> lags = new ArrayList<>();
        int detailed = 0;
        for (int offset = 0; offset < 10_000; offset += 1000) {
            int[] filled = {0};
            Map<String, Object> page = ConsumerListing.answer(
                    ListingQuery.parse(Map.of("offset", "" + offset, "limit", "1000")), rows, Map.of(),
                    r -> filled[0]++);
            detailed += filled[0];
            assertEquals(filled[0], 1000, "details only for the page");
            for (Object o : (List<?>) page.get("consumers")) {
                Map<?, ?> m = (Map<?, ?>) o;
                seen.add((Long) m.get("consumerId"));
                lags.add((Long) m.get("lag"));
            }
        }
        assertEquals(seen.size(), 10_000);
        assertEquals(detailed, 10_000);
        List<Long> sorted = new ArrayList<>(lags);
        sorted.sort((x, y) -> Long.compare(y, x));
        assertEquals(lags, sorted);
        Map<String, Object> beyond = answer(Map.of("offset", "10000"), rows);
        assertEquals(names(beyond), List.of());
        assertEquals(beyond.get("total"), 10_000);
    }

    @Test(timeOut = 10_000)
    public void detailsAreNullUntilFilled() {
        ConsumerRow r = row("x", 1, ListingQuery.State.IDLE, 0, 0);
        assertNull(r.toMap().get("address"));
    }
}
