#!/bin/bash
# One fleet run of the sixteenth session (docs/benchmarks.md, "Sixteenth session: a sampling profile ..."): puts the
# benchmark jar JAR in place, then runs the fleet with the fleet JVM's extra options EXTRA.
#   run.sh NAME JAR [EXTRA]
# MODE=broadcast (default; against the broker) or floor (against the floor server);
# CONSUMERS (100000), PER_CONNECTION (5000), RATE (1): the 10,000 x 10 msg/s run used
# CONSUMERS=10000 PER_CONNECTION=500 RATE=10 MODE=floor, the overload runs RATE=6 MODE=floor.
cd /work/main
name=$1; jar=$2; extra=$3; out=${OUT:-/tmp/exp16}
cp "$jar" benchmark/target/benchmark-2.10.5.0-SNAPSHOT.jar
flock /tmp/pb-heavy.lock bin/pulsar-broadcast bench --client fleet --consumers-per-connection ${PER_CONNECTION:-5000} \
  --modes ${MODE:-broadcast} --consumers ${CONSUMERS:-100000} --message-size 1024 --rate ${RATE:-1} --warmup 10 \
  --duration 60 --metrics-interval 5 \
  --fleet-java-opts "-Xms256m -Xmx2g -XX:+UseSerialGC -XX:MaxDirectMemorySize=4g $extra" --out $out/$name
