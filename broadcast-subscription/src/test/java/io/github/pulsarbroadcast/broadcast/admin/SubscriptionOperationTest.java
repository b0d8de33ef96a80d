package io.github.pulsarbroadcast.broadcast.admin;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertNull;

import org.apache.pulsar.common.policies.data.TopicOperation;
import org.testng.annotations.DataProvider;
import org.testng.annotations.Test;

/**
 * The admin requests {@link SubscriptionOperation} recognises, with the topic, subscription and operation it reads
 * from them, and requests it must leave alone (every other request the web service gets goes through it).
 */
public class SubscriptionOperationTest {

    @DataProvider
    public static Object[][] recognised() {
        String v2 = "/admin/v2/persistent/public/default/city-area-7/subscription/";
        return new Object[][]{
                {"POST", v2 + "fleet/resetcursor/1700000000000", "persistent://public/default/city-area-7", "fleet",
                        TopicOperation.RESET_CURSOR},
                {"POST", v2 + "fleet/resetcursor", "persistent://public/default/city-area-7", "fleet",
                        TopicOperation.RESET_CURSOR},
                {"POST", v2 + "fleet/skip/3", "persistent://public/default/city-area-7", "fleet",
                        TopicOperation.SKIP},
                {"POST", v2 + "fleet/skip_all", "persistent://public/default/city-area-7", "fleet",
                        TopicOperation.SKIP},
                {"POST", v2 + "fleet/expireMessages/60", "persistent://public/default/city-area-7", "fleet",
                        TopicOperation.EXPIRE_MESSAGES},
                {"POST", v2 + "fleet/expireMessages", "persistent://public/default/city-area-7", "fleet",
                        TopicOperation.EXPIRE_MESSAGES},
                {"PUT", v2 + "fleet/properties", "persistent://public/default/city-area-7", "fleet",
                        TopicOperation.CONSUME},
                // names as the stock admin client encodes them: a space, a slash and a non-ASCII letter
                {"POST", "/admin/v2/persistent/public/default/area%207/subscription/road%2Fdamage%C3%A9/skip/1",
                        "persistent://public/default/area 7", "road/damageé", TopicOperation.SKIP},
                // decoded as stock's handlers decode them: the topic once by Codec.decode ("+" is a space, "%2B" a
                // plus), the subscription twice (the path parameter, then Codec.decode: "%2B" is a space too)
                {"POST", "/admin/v2/persistent/public/default/a+b%2Bc/subscription/c%2Bd+e/skip_all",
                        "persistent://public/default/a b+c", "c d e", TopicOperation.SKIP},
                {"POST", "/admin/v2/persistent/public/default/t-partition-2/subscription/fleet/resetcursor",
                        "persistent://public/default/t-partition-2", "fleet", TopicOperation.RESET_CURSOR},
                // one trailing slash, which Jersey matches too (forty-second session's review)
                {"POST", v2 + "fleet/resetcursor/1700000000000/", "persistent://public/default/city-area-7", "fleet",
                        TopicOperation.RESET_CURSOR},
                {"PUT", v2 + "fleet/properties/", "persistent://public/default/city-area-7", "fleet",
                        TopicOperation.CONSUME},
                {"POST", v2 + "fleet/skip/3/", "persistent://public/default/city-area-7", "fleet",
                        TopicOperation.SKIP},
                // matrix parameters, which Jersey drops before it matches (forty-second session's review)
                {"POST", v2 + "fleet/skip_all;x=1", "persistent://public/default/city-area-7", "fleet",
                        TopicOperation.SKIP},
                {"POST", v2 + "fleet;x=1/resetcursor/0", "persistent://public/default/city-area-7", "fleet",
                        TopicOperation.RESET_CURSOR},
                // v1: property, cluster, namespace, topic
                {"POST", "/admin/persistent/acme/c1/ns/t/subscription/fleet/resetcursor/5",
                        "persistent://acme/c1/ns/t", "fleet", TopicOperation.RESET_CURSOR},
        };
    }

    @Test(groups = "unit", timeOut = 10_000, dataProvider = "recognised")
    public void readsTheTopicSubscriptionAndOperation(String method, String path, String topic, String subscription,
                                                      TopicOperation operation) {
        SubscriptionOperation op = SubscriptionOperation.parse(method, path);
        assertEquals(op.topic.toString(), topic, path);
        assertEquals(op.subscription, subscription, path);
        assertEquals(op.operation, operation, path);
    }

    @DataProvider
    public static Object[][] leftAlone() {
        String v2 = "/admin/v2/persistent/public/default/t/subscription/fleet/";
        return new Object[][]{
                {"GET", v2 + "position/1"},                                   // peek: reads only
                {"GET", "/lookup/v2/topic/persistent/public/default/t"},      // lookups
                {"GET", "/metrics/"},
                {"DELETE", "/admin/v2/persistent/public/default/t/subscription/fleet"}, // unsubscribe: handled
                {"PUT", "/admin/v2/persistent/public/default/t/subscription/fleet"},    // create a subscription
                {"POST", v2 + "skip"},                                        // skip without a count
                {"POST", v2 + "skip_all/1"},
                {"POST", v2 + "resetcursor/1/2"},
                {"PUT", v2 + "resetcursor"},
                {"POST", v2 + "properties"},
                {"POST", v2 + "unknown"},
                {"POST", "/admin/v2/non-persistent/public/default/t/subscription/fleet/skip_all"},
                {"POST", "/admin/v2/persistent/public/default/subscription/fleet/skip_all"}, // too few names
                {"POST", "/admin/v2/persistent/public//t/subscription/fleet/skip_all"},      // an empty name
                {"POST", "/admin/v2/persistent/public/default/t/subscription//skip_all"},
                {"POST", "/admin/v2/persistent/public/default/t/subscription/%zz/skip_all"}, // bad encoding
                {"PUT", "/admin/persistent/acme/c1/ns/t/subscription/fleet/properties"}, // no such v1 call
                {"POST", "/admin/v2/persistent/pub%2Flic/default/t/subscription/fleet/skip_all"}, // "/" in a name
                {"POST", "/admin/v2/persistent/public/de%2Ffault/t/subscription/fleet/skip_all"},
                {"POST", v2 + "skip/3//"},                                    // two trailing slashes
                {"POST", null},
        };
    }

    @Test(groups = "unit", timeOut = 10_000, dataProvider = "leftAlone")
    public void leavesEveryOtherRequestAlone(String method, String path) {
        assertNull(SubscriptionOperation.parse(method, path), path);
    }
}
