#!/bin/bash
# Capacity runs of the nineteenth session's final benchmark build (experiment F8 in): rates up to 12 msg/s on 100,000
# consumers, 100 per connection; the step back down at the highest rate that passed.
#   run.sh NAME [EXTRA...]   e.g. run.sh a1; run.sh split --modes split --split-subscriptions 4
cd /work/main
out=${OUT:-/tmp/s19/cap2}; name=$1; shift
modes="--modes broadcast"; case " $* " in *" --modes "*) modes="";; esac
flock /tmp/pb-heavy.lock bin/pulsar-broadcast bench --client fleet --consumers 100000 --consumers-per-connection 100 \
  --message-size 1024 --capacity-rates 1,2,4,6,8,10,12 --step-seconds 30 --step-down-seconds 60 \
  --metrics-interval 5 $modes "$@" --out $out/$name > $out/$name.log 2>&1
echo "$name done $(date -u +%H:%M:%S)" >> $out/progress
