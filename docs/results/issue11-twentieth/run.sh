#!/bin/bash
# Twentieth and twenty-first sessions, after the plugin pairs (docs/results/issue12/twentieth-e11/run.sh):
# experiment F9 (the fleet's acks and flows serialized with one BaseCommand per kind, sizes written after the
# command), pairs against the F8 build (the benchmark code of 74692d9) at 100,000 consumers x 5,000 per connection x
# 1 msg/s, then the Java client against the F9 fleet (issue 11, item 4). Plugin: e12 in every run.
#   JARS=/tmp/s21/jars OUT=/tmp/s21/f9 run.sh
cd /work/main
jars=${JARS:-/tmp/s21/jars}
export OUT=${OUT:-/tmp/s21/f9} PER_CONNECTION=5000 RATE=1
mkdir -p $OUT
for n in before-1:bench-before f9-1:bench-f9 before-2:bench-before f9-2:bench-f9; do
  bash docs/results/issue11-fleet-sixteenth/run.sh ${n%%:*} $jars/${n##*:}.jar > $OUT/${n%%:*}.log 2>&1
  echo "${n%%:*} $(date -u +%H:%M:%S)" >> $OUT/progress
done
cp $jars/bench-f9.jar benchmark/target/benchmark-2.10.5.0-SNAPSHOT.jar
for client in java fleet; do
  opts="--client fleet --consumers-per-connection 5000"
  [ $client = java ] && opts="--client java --consumers-per-client 5000"
  flock /tmp/pb-heavy.lock bin/pulsar-broadcast bench $opts --modes broadcast --consumers 100000 --message-size 1024 \
    --rate 1 --warmup 10 --duration 60 --metrics-interval 5 --out $OUT/jf-$client > $OUT/jf-$client.log 2>&1
  echo "jf-$client $(date -u +%H:%M:%S)" >> $OUT/progress
done
