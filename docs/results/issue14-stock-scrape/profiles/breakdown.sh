#!/bin/bash
# CPU samples (1 ms each) of the broker's metrics thread by where they fell, and of the plugin's stats pass, from the
# collapsed stacks kept here (async-profiler 3.0, event=cpu, interval=1ms, threads; one 100,000-consumer run each).
#   breakdown.sh before-scrape-and-stats-pass.collapsed.gz after-scrape-and-stats-pass.collapsed.gz
for f in "$@"; do
  echo "== $f"
  zcat "$f" | grep '^\[prometheus-stats' | awk '{n=$NF; tot+=n;
    if ($0 ~ /PersistentSubscription.getStats/) a+=n; else if ($0 ~ /aggregateTopicStats/) b+=n;
    else if ($0 ~ /pulsarbroadcast/) c+=n; else if ($0 ~ /NamespaceStatsAggregator/) d+=n;
    else if ($0 ~ /generateSystemMetrics|CollectorRegistry|Collector/) e+=n; else f+=n}
    END {printf "metrics thread %d ms: stock subscription stats (a record per consumer) %d, stock aggregator adding them up %d, plugin (its metrics, the caller check, the totals) %d, rest of the stock aggregator %d, JVM and system collectors %d, other %d\n", tot, a, b, c, d, e, f}'
  zcat "$f" | grep 'BroadcastDispatcher.publishStats' | awk '{n+=$NF} END {printf "stats pass (every 5 s) %d ms\n", n}'
done
