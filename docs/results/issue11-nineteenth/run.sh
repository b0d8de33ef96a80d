#!/bin/bash
# After the goal-1 runs: F8 pairs at 5,000 per connection (1 msg/s), then the Java client against the fleet.
while ! grep -q k100 /tmp/s19/g1/progress 2>/dev/null; do sleep 5; done
cd /work/main
export OUT=/tmp/s19/k5p PER_CONNECTION=5000 RATE=1
mkdir -p $OUT
for n in before-1:before f8-1:f8 before-2:before f8-2:f8; do
  bash docs/results/issue11-fleet-sixteenth/run.sh ${n%%:*} /tmp/s19/jars/${n##*:}.jar > $OUT/${n%%:*}.log 2>&1
  echo "${n%%:*} $(date -u +%H:%M:%S)" >> $OUT/progress
done
cp /tmp/s19/jars/f8.jar benchmark/target/benchmark-2.10.5.0-SNAPSHOT.jar
mkdir -p /tmp/s19/jf
flock /tmp/pb-heavy.lock bin/pulsar-broadcast bench --client java --consumers-per-client 5000 --modes broadcast --consumers 100000 --message-size 1024 --rate 1 --warmup 10 --duration 60 --metrics-interval 5 --out /tmp/s19/jf/java > /tmp/s19/jf/java.log 2>&1
echo "java $(date -u +%H:%M:%S)" >> /tmp/s19/jf/progress
flock /tmp/pb-heavy.lock bin/pulsar-broadcast bench --client fleet --consumers-per-connection 5000 --modes broadcast --consumers 100000 --message-size 1024 --rate 1 --warmup 10 --duration 60 --metrics-interval 5 --out /tmp/s19/jf/fleet > /tmp/s19/jf/fleet.log 2>&1
echo "fleet $(date -u +%H:%M:%S)" >> /tmp/s19/jf/progress
