#!/bin/bash
# One fleet run of the thirteenth session's pairs (docs/benchmarks.md, "The fleet's acks gathered per read"): puts the
# benchmark jar JAR in place (the builds compared were saved as jars), then runs the same command with the fleet
# processes' extra JVM options EXTRA (the ablation X1 used -Dx.skip=true with a build whose latency recording returned
# at once when that property was set).
#   run.sh NAME JAR [EXTRA]
# The runs, in this order, one after the other:
#   a1-before before.jar; a1-after f1.jar; a2-before before.jar; a2-after f1.jar
#   b1-f1 f1.jar; b1-f2 f2.jar; b2-f1 f1.jar; b2-f2 f2.jar
#   c1-f1 f1.jar; c1-x1 x1.jar -Dx.skip=true; c1-f3 f3.jar; c2-f1 f1.jar; c2-f3 f3.jar
#   e1-before before.jar; e1-after final.jar (09:10, nothing else running)
# and jf.sh (the Java client and the fleet on the final build).
# The fourteenth session's pair (experiment F4, the entry copy) ran it with OUT=/tmp/exp14:
#   g1-before bench-before.jar; g1-f4 bench-f4.jar; g2-before bench-before.jar; g2-f4 bench-f4.jar
cd /work/main
name=$1; jar=$2; extra=$3; out=${OUT:-/tmp/exp13}
cp "$jar" benchmark/target/benchmark-2.10.5.0-SNAPSHOT.jar
flock /tmp/pb-heavy.lock bin/pulsar-broadcast bench --client fleet --consumers-per-connection 5000 --modes broadcast \
  --consumers 100000 --message-size 1024 --rate 1 --warmup 10 --duration 60 --metrics-interval 5 \
  --fleet-java-opts "-Xms256m -Xmx2g -XX:+UseSerialGC -XX:MaxDirectMemorySize=4g $extra" --out $out/$name
