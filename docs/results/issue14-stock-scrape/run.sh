#!/bin/bash
# Pairs of plugin builds, alternated (eighteenth session: issue 14's scrape pairs, and issue 12's pair in
# results/issue12/eighteenth-g1-pair): for each NAME, the jar /tmp/exp18/PREFIX.jar (PREFIX: NAME up to its first '-')
# is swapped into the benchmark's class path and the fleet runs against it.
#   run.sh NAME...   e.g. run.sh before-1 after-1; CONSUMERS (1000,10000,100000) chooses the sizes.
# It ends by putting the issue-14 'after' build back; the module's jar is then a copy, which Maven judges up to date:
# delete it before the next build.
# The jar swapped is the one the benchmark's class path names (benchmark/target/classpath.txt): the module's target/
# after a build of the whole project, the local Maven repository's copy after a build of the benchmark module alone;
# each report's "plugin classes" line shows which jar ran, with its SHA-256.
cd /work/main
t=$(tr ':' '\n' < benchmark/target/classpath.txt | grep '/broadcast-subscription-[^/]*\.jar$')
for name in "$@"; do
  build=${name%%-*}
  cp /tmp/exp18/$build.jar $t
  flock /tmp/pb-heavy.lock bin/pulsar-broadcast bench --client fleet --modes broadcast --consumers ${CONSUMERS:-1000,10000,100000} \
    --consumers-per-connection 100 --message-size 1024 --rate 1 --warmup 10 --duration 60 --metrics-interval 5 \
    --out /tmp/exp18/$name > /tmp/exp18/$name.log 2>&1
  echo "$name done $(date -u +%H:%M:%S)" >> /tmp/exp18/progress
done
cp /tmp/exp18/after.jar $t
