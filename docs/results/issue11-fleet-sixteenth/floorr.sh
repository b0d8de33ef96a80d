#!/bin/bash
cd /work/main
name=$1; jar=$2; extra=$3; out=${OUT:-/tmp/exp16}
cp "$jar" benchmark/target/benchmark-2.10.5.0-SNAPSHOT.jar
flock /tmp/pb-heavy.lock bin/pulsar-broadcast bench --client fleet --consumers-per-connection 5000 --modes floor \
  --consumers 100000 --message-size 1024 --rate ${RATE:-1} --warmup 10 --duration 60 --metrics-interval 5 \
  --fleet-java-opts "-Xms256m -Xmx2g -XX:+UseSerialGC -XX:MaxDirectMemorySize=4g $extra" --out $out/$name
