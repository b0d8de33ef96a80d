#!/bin/bash
# Twenty-fifth session, issue 12 goals 1 and 2 (per subscribe) on a warm broker: after warm.sh (main), the same
# command with issue 11's build (base, SHA-256 9f01b50ed171), then main again, each five runs against one broker JVM.
#   JARS=/tmp/s24/jars OUT=/tmp/s25/warm pair.sh
cd /work/main
jars=${JARS:-/tmp/s24/jars}; out=${OUT:-/tmp/s25/warm}
mkdir -p $out
t=$(tr ':' '\n' < benchmark/target/classpath.txt | grep '/broadcast-subscription-[^/]*\.jar$')
for n in base main; do
  cp $jars/$n.jar $t
  flock /tmp/pb-heavy.lock bin/pulsar-broadcast bench --client fleet --modes broadcast --consumers 100000 \
    --consumers-per-connection 100 --message-size 1024 --rate 1 --warmup 10 --duration 60 --metrics-interval 5 \
    --repeat 5 --no-fresh-broker --out $out/k100-warm-$n > $out/k100-warm-$n.log 2>&1
  echo "k100-warm-$n done $(date -u +%H:%M:%S)" >> $out/progress
done
cp $jars/main.jar $t
