#!/bin/bash
# Experiments 11 and 12 (twentieth and twenty-first sessions), issue 12 goal 2: for each NAME the plugin jar
# $JARS/PREFIX.jar (PREFIX: NAME up to its first '-'; before = 74692d9's build, e11 = experiment 11 (the dense
# position table, one send lookup per connection), e12 = e11 and experiment 12 (a message frame's command walked
# once)) is put where the benchmark's class path names it and the fleet runs 100,000 consumers, 100 per connection,
# 1 KB at 1 msg/s, with a 60-s warm-up (the goal-2 command of the nineteenth session). Check each report's "plugin
# classes" line and its SHA-256. It ends by putting e12 back.
#   JARS=/tmp/s21/jars OUT=/tmp/s21/g2 run.sh before-1 e11-1 e12-1 before-2 ...
cd /work/main
jars=${JARS:-/tmp/s21/jars}; out=${OUT:-/tmp/s21/g2}
mkdir -p $out
t=$(tr ':' '\n' < benchmark/target/classpath.txt | grep '/broadcast-subscription-[^/]*\.jar$')
for name in "$@"; do
  cp $jars/${name%%-*}.jar $t
  flock /tmp/pb-heavy.lock bin/pulsar-broadcast bench --client fleet --modes broadcast --consumers 100000 \
    --consumers-per-connection 100 --message-size 1024 --rate 1 --warmup 60 --duration 60 --metrics-interval 5 \
    --out $out/$name > $out/$name.log 2>&1
  echo "$name done $(date -u +%H:%M:%S)" >> $out/progress
done
cp $jars/e12.jar $t
