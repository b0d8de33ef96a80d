#!/bin/bash
# One run of the fifteenth session's pairs (docs/benchmarks.md, "Experiment 10"): puts the plugin jar JAR where the
# benchmark's broker loads the plugin's classes from (the local Maven repository's copy is on its class path, ahead of
# the NAR's: parent-first), then runs the 5,000-per-connection command once.
#   run.sh NAME JAR
# The runs, in this order: s1-before before.jar; s1-after after.jar; s2-before before.jar; s2-after after.jar;
# after the review, the final build twice: s3-final final.jar; s4-final final.jar
cd /work/main
name=$1; jar=$2; out=${OUT:-/tmp/exp15}
m2=${M2_JAR:-/root/.m2/repository/io/github/pulsarbroadcast/broadcast-subscription/2.10.5.0-SNAPSHOT/broadcast-subscription-2.10.5.0-SNAPSHOT.jar}
cp "$jar" "$m2"
flock /tmp/pb-heavy.lock bin/pulsar-broadcast bench --client fleet --consumers-per-connection 5000 --modes broadcast \
  --consumers 100000 --message-size 1024 --rate 1 --warmup 10 --duration 60 --metrics-interval 5 --out $out/$name
