#!/bin/bash
# Capacity pairs of benchmark builds (nineteenth session, experiment F8): for each NAME the benchmark jar
# JARS/PREFIX.jar (PREFIX: NAME up to its first '-') is put in place, then the capacity command runs.
#   run.sh NAME...   OUT (/tmp/s19/cap), JARS (/tmp/s19/jars), RATES (1,2,3,4,5,6,8), MODES (broadcast)
cd /work/main
out=${OUT:-/tmp/s19/cap}; jars=${JARS:-/tmp/s19/jars}
for name in "$@"; do
  cp "$jars/${name%%-*}.jar" benchmark/target/benchmark-2.10.5.0-SNAPSHOT.jar
  flock /tmp/pb-heavy.lock bin/pulsar-broadcast bench --client fleet --consumers 100000 --consumers-per-connection 100 \
    --message-size 1024 --capacity-rates ${RATES:-1,2,3,4,5,6,8} --step-seconds 30 --step-down-seconds 60 \
    --metrics-interval 5 --modes ${MODES:-broadcast} --out $out/$name > $out/$name.log 2>&1
  echo "$name done $(date -u +%H:%M:%S)" >> $out/progress
done
