#!/bin/bash
# Twenty-fifth session (docs/benchmarks.md, issue 11 item 4): the Java client and the fleet one after the other on
# the same broker build, three times, 100,000 consumers x 5,000 per connection (client) x 1 KB at 1 msg/s, 10-s
# warm-up; the benchmark jar of 5502ee4 (JARS/bench-main.jar), the plugin of b011c5e (SHA-256 535e712c410f).
#   JARS=/tmp/s25/jars OUT=/tmp/s25/jf pairs.sh
cd /work/main
jars=${JARS:-/tmp/s25/jars}
out=${OUT:-/tmp/s25/jf}
mkdir -p $out
cp $jars/bench-main.jar benchmark/target/benchmark-2.10.5.0-SNAPSHOT.jar
for i in 1 2 3; do
  for client in java fleet; do
    opts="--client fleet --consumers-per-connection 5000"
    [ $client = java ] && opts="--client java --consumers-per-client 5000"
    flock /tmp/pb-heavy.lock bin/pulsar-broadcast bench $opts --modes broadcast --consumers 100000 --message-size 1024 \
      --rate 1 --warmup 10 --duration 60 --metrics-interval 5 --out $out/$client-$i > $out/$client-$i.log 2>&1
    echo "$client-$i $(date -u +%H:%M:%S)" >> $out/progress
  done
done
