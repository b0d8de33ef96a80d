#!/bin/bash
# Twenty-third session, issue 12 goal 3 against the floor that writes as the broker does: 15,000 consumers, one TCP
# connection each, 1 KB at 1 msg/s, 10-s warm-up, fleet. NAME "new-*": --modes broadcast,floor with the benchmark jar
# $BJARS/new.jar (broker and the new floor in one run); "fold-*": --modes floor with $BJARS/old.jar (the floor as it
# was). new.jar is put back at the end.
#   OUT=/tmp/s23/veh run.sh new-1 fold-1
cd /work/main
bjars=${BJARS:-/tmp/s23/bjars}; out=${OUT:-/tmp/s23/veh}
mkdir -p $out
b=$(ls benchmark/target/benchmark-*.jar)
for name in "$@"; do
  modes=broadcast,floor; jar=new
  case $name in fold-*) modes=floor; jar=old;; esac
  cp $bjars/$jar.jar $b
  flock /tmp/pb-heavy.lock bin/pulsar-broadcast bench --client fleet --modes $modes --consumers 15000 \
    --consumers-per-connection 1 --message-size 1024 --rate 1 --warmup 10 --duration 60 --metrics-interval 5 \
    --out $out/$name > $out/$name.log 2>&1
  echo "$name done $(date -u +%H:%M:%S)" >> $out/progress
done
cp $bjars/new.jar $b
