#!/bin/bash
# Twenty-third session, experiment 14: the broker's event loops, numIOThreads=2 (the number of cores, as the floor
# server's) against the default (2 x cores = 4). NAME "io2-*": the goal-2 command with io2.conf here added to the
# broker's configuration; "main-*": the same without it. Plugin of b011c5e in both.
#   OUT=/tmp/s23/io run.sh main-7 io2-1 io2-2 main-8
cd /work/main; out=${OUT:-/tmp/s23/io}; conf=$(cd "$(dirname "$0")" && pwd)/io2.conf
mkdir -p $out
for name in "$@"; do
  extra=""
  if [[ $name == io2-* ]]; then extra="--broker-config $conf"; fi
  flock /tmp/pb-heavy.lock bin/pulsar-broadcast bench --client fleet --modes broadcast --consumers 100000 \
    --consumers-per-connection 100 --message-size 1024 --rate 1 --warmup 60 --duration 60 --metrics-interval 5 \
    $extra --out $out/$name > $out/$name.log 2>&1
  echo "$name done $(date -u +%H:%M:%S)" >> $out/progress
done
