#!/bin/bash
# Before/after pairs of the stock part of a scrape (issue 14): the plugin jar swapped in the benchmark's class path.
cd /work/main
t=broadcast-subscription/target/broadcast-subscription-2.10.5.0-SNAPSHOT.jar
for name in "$@"; do
  build=${name%%-*}
  cp /tmp/exp18/$build.jar $t
  flock /tmp/pb-heavy.lock bin/pulsar-broadcast bench --client fleet --modes broadcast --consumers ${CONSUMERS:-1000,10000,100000} \
    --consumers-per-connection 100 --message-size 1024 --rate 1 --warmup 10 --duration 60 --metrics-interval 5 \
    --out /tmp/exp18/$name > /tmp/exp18/$name.log 2>&1
  echo "$name done $(date -u +%H:%M:%S)" >> /tmp/exp18/progress
done
cp /tmp/exp18/after.jar $t
