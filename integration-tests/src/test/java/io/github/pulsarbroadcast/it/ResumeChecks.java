package io.github.pulsarbroadcast.it;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;
import static org.testng.Assert.fail;

import java.util.List;

/**
 * What "nothing lost, duplicates bounded" means for a consumer that resumed after its topic moved: what it receives
 * afterwards is a contiguous, ordered run of the published messages that starts at or before the first message it
 * had not acknowledged and ends with the last one published.
 *
 * <p>Threading: stateless.
 */
final class ResumeChecks {

    private ResumeChecks() {
    }

    /**
     * @param published every message published, in order
     * @param acknowledged how many of them (a prefix) the consumer had acknowledged before the move
     * @param received what it received after the move, in order
     * @param maxDuplicates the documented bound on messages it sees again
     */
    static void assertResumedWithoutLoss(List<String> published, int acknowledged, List<String> received,
                                         int maxDuplicates) {
        int first = published.indexOf(received.get(0));
        assertTrue(first >= 0, "unknown first message " + received.get(0));
        if (first > acknowledged) {
            fail("lost messages " + published.subList(acknowledged, first));
        }
        assertEquals(received, published.subList(first, published.size()), "ordered, contiguous, complete");
        assertTrue(acknowledged - first <= maxDuplicates,
                (acknowledged - first) + " duplicates, more than the bound " + maxDuplicates);
    }
}
