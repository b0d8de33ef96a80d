package io.github.pulsarbroadcast.executor;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertNotEquals;
import static org.testng.Assert.assertThrows;
import static org.testng.Assert.assertTrue;

import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import org.testng.annotations.Test;

public class SubscriptionKeyTest {

    private static final String TOPIC = "persistent://public/default/prices";

    @Test(groups = "unit", timeOut = 5_000)
    public void equalKeysAreEqualAndHashAlike() {
        SubscriptionKey a = SubscriptionKey.of(TOPIC, "sub");
        SubscriptionKey b = SubscriptionKey.of(new String(TOPIC), new String("sub"));

        assertEquals(a, a);
        assertEquals(a, b);
        assertEquals(b, a);
        assertEquals(a.hashCode(), b.hashCode());
        assertEquals(a.topic(), TOPIC);
        assertEquals(a.subscription(), "sub");
        assertEquals(a.toString(), TOPIC + "/sub");
    }

    @Test(groups = "unit", timeOut = 5_000)
    public void keysDifferingInEitherFieldAreNotEqual() {
        SubscriptionKey a = SubscriptionKey.of(TOPIC, "sub");

        assertNotEquals(a, SubscriptionKey.of(TOPIC, "sub2"));
        assertNotEquals(a, SubscriptionKey.of(TOPIC + "2", "sub"));
        assertNotEquals(a, SubscriptionKey.of("sub", TOPIC));
        assertNotEquals(a, null);
        assertNotEquals(a, TOPIC + "/sub");
    }

    @Test(groups = "unit", timeOut = 5_000)
    public void equalityIsOnFieldsNotOnTheSlashJoinedString() {
        SubscriptionKey a = SubscriptionKey.of("a/b", "c");
        SubscriptionKey b = SubscriptionKey.of("a", "b/c");

        assertEquals(a.toString(), b.toString());
        assertNotEquals(a, b);
    }

    @Test(groups = "unit", timeOut = 5_000)
    public void nullsAreRejected() {
        assertThrows(NullPointerException.class, () -> SubscriptionKey.of(null, "sub"));
        assertThrows(NullPointerException.class, () -> SubscriptionKey.of(TOPIC, null));
    }

    @Test(groups = "unit", timeOut = 5_000)
    public void hashSpreadsKeysEvenlyOverThreadCounts() {
        int keys = 8_000;
        for (int threads : new int[] {2, 3, 4, 8, 16}) {
            int[] bySubscription = new int[threads];
            int[] byTopic = new int[threads];
            for (int i = 0; i < keys; i++) {
                bySubscription[Math.floorMod(SubscriptionKey.of(TOPIC, "sub-" + i).hashCode(), threads)]++;
                byTopic[Math.floorMod(SubscriptionKey.of(TOPIC + "-" + i, "sub").hashCode(), threads)]++;
            }
            assertBalanced(bySubscription, keys / threads);
            assertBalanced(byTopic, keys / threads);
        }
    }

    @Test(groups = "unit", timeOut = 5_000)
    public void fewHashCollisions() {
        int keys = 10_000;
        Set<Integer> distinctHashes = new HashSet<>();
        for (int i = 0; i < keys; i++) {
            distinctHashes.add(SubscriptionKey.of(TOPIC, "sub-" + i).hashCode());
        }
        assertTrue(distinctHashes.size() > keys * 99 / 100, "too many hash collisions: " + distinctHashes.size());
    }

    private static void assertBalanced(int[] perThread, int expected) {
        for (int count : perThread) {
            // Binomial spread: the standard deviation is below sqrt(expected), so +-15 % is over 5 sigma here.
            assertTrue(Math.abs(count - expected) < expected * 15 / 100,
                    "unbalanced: " + Arrays.toString(perThread) + ", expected about " + expected + " each");
        }
    }
}
