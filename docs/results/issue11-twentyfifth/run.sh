#!/bin/bash
# Twenty-fifth session (docs/benchmarks.md, "Experiment F10"): the fleet's deliveries recorded in runs per read
# (DeliveryBatch) against the benchmark code of 5502ee4, alternated at 100,000 consumers x 5,000 per connection x
# 1 msg/s against the floor server and against the broker, then the Java client and the F10 fleet back to back
# (issue 11, item 4). Plugin of b011c5e (SHA-256 535e712c410f) in every broker run. Uses the sixteenth session's
# run.sh for each fleet run (it puts the benchmark jar in place).
#   JARS=/tmp/s25/jars OUT=/tmp/s25/f10 run.sh
cd /work/main
jars=${JARS:-/tmp/s25/jars}
export OUT=${OUT:-/tmp/s25/f10} PER_CONNECTION=5000 RATE=1
mkdir -p $OUT
one() { # NAME JAR MODE
  MODE=$3 bash docs/results/issue11-fleet-sixteenth/run.sh $1 $jars/$2.jar > $OUT/$1.log 2>&1
  echo "$1 $(date -u +%H:%M:%S)" >> $OUT/progress
}
for i in 1 2 3; do
  one floor-main-$i bench-main floor
  one floor-f10-$i bench-db floor
done
for i in 1 2; do
  one broker-main-$i bench-main broadcast
  one broker-f10-$i bench-db broadcast
done
cp $jars/bench-db.jar benchmark/target/benchmark-2.10.5.0-SNAPSHOT.jar
for client in java fleet; do
  opts="--client fleet --consumers-per-connection 5000"
  [ $client = java ] && opts="--client java --consumers-per-client 5000"
  flock /tmp/pb-heavy.lock bin/pulsar-broadcast bench $opts --modes broadcast --consumers 100000 --message-size 1024 \
    --rate 1 --warmup 10 --duration 60 --metrics-interval 5 --out $OUT/jf-$client > $OUT/jf-$client.log 2>&1
  echo "jf-$client $(date -u +%H:%M:%S)" >> $OUT/progress
done
