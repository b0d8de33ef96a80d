#!/bin/bash
# Twenty-sixth session: the goal-2 command with this session's plugin (s26: 7c445eb's) and the one it started from
# (s25: b011c5e's code, SHA-256 535e712c410f), alternated, to see whether the correctness fixes cost anything.
#   JARS=/tmp/s26/jars OUT=/tmp/s26/g2 run.sh s26-1 s25-1 s26-2 s25-2
cd /work/main
jars=${JARS:-/tmp/s26/jars}; out=${OUT:-/tmp/s26/g2}
mkdir -p $out
t=$(tr ':' '\n' < benchmark/target/classpath.txt | grep '/broadcast-subscription-[^/]*\.jar$')
for name in "$@"; do
  cp $jars/${name%%-*}.jar $t
  flock /tmp/pb-heavy.lock bin/pulsar-broadcast bench --client fleet --modes broadcast --consumers 100000 \
    --consumers-per-connection 100 --message-size 1024 --rate 1 --warmup 60 --duration 60 --metrics-interval 5 \
    --out $out/$name > $out/$name.log 2>&1
  echo "$name done $(date -u +%H:%M:%S)" >> $out/progress
done
cp $jars/s26.jar $t
