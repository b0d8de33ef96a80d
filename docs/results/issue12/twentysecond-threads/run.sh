#!/bin/bash
# Twenty-second session, issue 12 goal 2 with the broker's CPU by thread group: for each NAME the plugin jar
# $JARS/PREFIX.jar (PREFIX: NAME up to its first '-'; base = issue 11's build 9fa9084, main = e2ea0f6's plugin, the
# same as 7f0c7f5's, e13 = main with experiment 13, the flows of one event-loop pass handed over together: e13.diff
# here) is put where the benchmark's class path names it and the fleet runs 100,000 consumers, 100 per
# connection, 1 KB at 1 msg/s, with a 60-s warm-up (the goal-2 command of the nineteenth session); NAME "floor-*"
# runs the same command against the floor server instead (--modes floor). Check each report's "plugin classes" line
# and its SHA-256. It ends by putting main back.
#   JARS=/tmp/s22/jars OUT=/tmp/s22/g2 run.sh base-1 main-1 base-2 main-2 floor-1   (then main-3 base-3 floor-2 main-4
#   base-4; main-5 e13-1 main-6 e13-2; e13-3 main-7 e13-4 main-8)
cd /work/main
jars=${JARS:-/tmp/s22/jars}; out=${OUT:-/tmp/s22/g2}
mkdir -p $out
t=$(tr ':' '\n' < benchmark/target/classpath.txt | grep '/broadcast-subscription-[^/]*\.jar$')
for name in "$@"; do
  mode=broadcast
  if [[ $name == floor-* ]]; then mode=floor; else cp $jars/${name%%-*}.jar $t; fi
  flock /tmp/pb-heavy.lock bin/pulsar-broadcast bench --client fleet --modes $mode --consumers 100000 \
    --consumers-per-connection 100 --message-size 1024 --rate 1 --warmup 60 --duration 60 --metrics-interval 5 \
    --out $out/$name > $out/$name.log 2>&1
  echo "$name done $(date -u +%H:%M:%S)" >> $out/progress
done
cp $jars/main.jar $t
