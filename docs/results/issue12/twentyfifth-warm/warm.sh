#!/bin/bash
# Twenty-fifth session, issue 12 goal 1: the connect storm on a broker that has already served one (the JIT warm),
# the nineteenth session's goal-1 command at 100 consumers per connection, five runs against one broker JVM
# (--no-fresh-broker: run 1 meets a fresh broker, runs 2-5 one that has connected and served 100,000 consumers before);
# b011c5e's plugin (SHA-256 535e712c410f) where the benchmark's class path names it.
#   JARS=/tmp/s24/jars OUT=/tmp/s25/warm warm.sh
cd /work/main
jars=${JARS:-/tmp/s24/jars}; out=${OUT:-/tmp/s25/warm}
mkdir -p $out
t=$(tr ':' '\n' < benchmark/target/classpath.txt | grep '/broadcast-subscription-[^/]*\.jar$')
cp $jars/main.jar $t
flock /tmp/pb-heavy.lock bin/pulsar-broadcast bench --client fleet --modes broadcast --consumers 100000 \
  --consumers-per-connection 100 --message-size 1024 --rate 1 --warmup 10 --duration 60 --metrics-interval 5 \
  --repeat 5 --no-fresh-broker --out $out/k100-warm > $out/k100-warm.log 2>&1
echo "k100-warm done $(date -u +%H:%M:%S)" >> $out/progress
