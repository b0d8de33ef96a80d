#!/bin/bash
cd /work/main
C100K="--modes broadcast --consumers 100000 --message-size 1024 --rate 1 --warmup 10 --duration 60 --metrics-interval 5"
run() { name=$1; shift; echo "$(date +%T) start $name" >> /tmp/exp13/pairs.log; flock /tmp/pb-heavy.lock bin/pulsar-broadcast bench "$@" --out /tmp/exp13/$name > /tmp/exp13/$name.log 2>&1; echo "$(date +%T) end $name rc=$?" >> /tmp/exp13/pairs.log; }
run d1-java --client java --consumers-per-client 5000 $C100K
run d1-fleet --client fleet --consumers-per-connection 5000 $C100K
