#!/bin/bash
# Twenty-third session: the floor server with copied frames (FloorFrames) against the floor as it was, and the broker, at the
# goal-2 layout (100,000 consumers, 100 per connection, 1 KB at 1 msg/s, 60-s warm-up, fleet). NAME: fold-* = the floor
# with the benchmark jar $BJARS/old.jar (before), fnew-* = with $BJARS/new.jar, main-* = the broker (plugin of main) with
# new.jar. The benchmark jar is put where bin/pulsar-broadcast finds it; new.jar is put back at the end.
#   BJARS=/tmp/s23/bjars OUT=/tmp/s23/floor run.sh fold-1 fnew-1 main-5 fnew-2 fold-2 main-6
# (old.jar: b011c5e's benchmark, SHA-256 c6cc93252b3d; new.jar: with FloorFrames, 03b1f0ce142c; plugin of b011c5e,
# 535e712c410f.) Tables: ../twentysecond-threads/threads.py fold-1 fnew-1 ... (run in OUT) > threads.md
cd /work/main
bjars=${BJARS:-/tmp/s23/bjars}; out=${OUT:-/tmp/s23/floor}
mkdir -p $out
b=$(ls benchmark/target/benchmark-*.jar)
for name in "$@"; do
  mode=floor; jar=new
  case $name in fold-*) jar=old;; main-*) mode=broadcast;; esac
  cp $bjars/$jar.jar $b
  flock /tmp/pb-heavy.lock bin/pulsar-broadcast bench --client fleet --modes $mode --consumers 100000 \
    --consumers-per-connection 100 --message-size 1024 --rate 1 --warmup 60 --duration 60 --metrics-interval 5 \
    --out $out/$name > $out/$name.log 2>&1
  echo "$name done $(date -u +%H:%M:%S)" >> $out/progress
done
cp $bjars/new.jar $b
