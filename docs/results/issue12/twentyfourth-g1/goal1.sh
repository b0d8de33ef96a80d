#!/bin/bash
# Twenty-fourth session, issue 12 goal 1 (five runs in a row, each layout), the nineteenth session's command, with
# b011c5e's plugin (unchanged to this session's commit; SHA-256 535e712c410f) put where the benchmark's class path
# names it and the broker's default JVM options.
#   JARS=/tmp/s24/jars OUT=/tmp/s24/g1 goal1.sh
cd /work/main
jars=${JARS:-/tmp/s24/jars}; out=${OUT:-/tmp/s24/g1}
mkdir -p $out
t=$(tr ':' '\n' < benchmark/target/classpath.txt | grep '/broadcast-subscription-[^/]*\.jar$')
cp $jars/main.jar $t
for k in 5000 100; do
  flock /tmp/pb-heavy.lock bin/pulsar-broadcast bench --client fleet --modes broadcast --consumers 100000 \
    --consumers-per-connection $k --message-size 1024 --rate 1 --warmup 10 --duration 60 --metrics-interval 5 \
    --repeat 5 --out $out/k$k > $out/k$k.log 2>&1
  echo "k$k done $(date -u +%H:%M:%S)" >> $out/progress
done
