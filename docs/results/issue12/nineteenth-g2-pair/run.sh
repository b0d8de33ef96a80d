#!/bin/bash
# Issue 12 goal 2 (per delivery against issue 11's build), nineteenth session: for each NAME the plugin jar
# /tmp/s19/jars/PREFIX.jar (PREFIX: NAME up to its first '-'; base = issue 11's build 9fa9084, now = 09b95c8) is put
# in the benchmark's class path and the fleet runs 100,000 consumers, 100 per connection, with a 60-s warm-up.
# The benchmark's class path (benchmark/target/classpath.txt) names the plugin jar Maven resolved when the benchmark
# module was last built: the module's target/ after a build of the whole project, the local repository's copy after
# a build of the benchmark module alone (as here: check the reports' "plugin classes" line and its SHA-256).
# It ends by putting 'now' back (a copy: delete the module's jar before the next build).
cd /work/main
t=$(tr ':' '\n' < benchmark/target/classpath.txt | grep '/broadcast-subscription-[^/]*\.jar$')
for name in "$@"; do
  cp /tmp/s19/jars/${name%%-*}.jar $t
  flock /tmp/pb-heavy.lock bin/pulsar-broadcast bench --client fleet --modes broadcast --consumers 100000 \
    --consumers-per-connection 100 --message-size 1024 --rate 1 --warmup 60 --duration 60 --metrics-interval 5 \
    --out /tmp/s19/g2/$name > /tmp/s19/g2/$name.log 2>&1
  echo "$name done $(date -u +%H:%M:%S)" >> /tmp/s19/g2/progress
done
cp /tmp/s19/jars/now.jar $t
