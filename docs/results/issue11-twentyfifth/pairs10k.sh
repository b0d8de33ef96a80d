#!/bin/bash
# Twenty-fifth session (docs/benchmarks.md, issue 11 item 4): the same deliveries per second as pairs.sh (100,000 a
# second) from 10,000 consumers at 10 msg/s, 5,000 per client/connection, the Java client and the fleet one after
# the other, twice; the benchmark jar and plugin as in pairs.sh (the benchmark code of ff24bc6 differs from 5502ee4's
# only in the report's warm-broker note).
#   OUT=/tmp/s25/jf10k pairs10k.sh
cd /work/main
out=${OUT:-/tmp/s25/jf10k}
mkdir -p $out
for i in 1 2; do
  for client in java fleet; do
    opts="--client fleet --consumers-per-connection 5000"
    [ $client = java ] && opts="--client java --consumers-per-client 5000"
    flock /tmp/pb-heavy.lock bin/pulsar-broadcast bench $opts --modes broadcast --consumers 10000 --message-size 1024 \
      --rate 10 --warmup 10 --duration 60 --metrics-interval 5 --out $out/$client-$i > $out/$client-$i.log 2>&1
    echo "$client-$i $(date -u +%H:%M:%S)" >> $out/progress
  done
done
