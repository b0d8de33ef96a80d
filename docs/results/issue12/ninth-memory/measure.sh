#!/bin/bash
# Usage: measure.sh LABEL CONSUMERS CONSUMERS_PER_CONNECTION (writes /tmp/cap/mem-LABEL; needs jcmd and a built tree)
# Broker heap per broadcast consumer, by class: class histograms of a standalone broker before, during (everyone
# connected) and after a fleet run. Args: label consumers per-connection
set -u
L=$1; N=$2; K=$3
OUT=/tmp/cap/mem-$L; rm -rf $OUT /tmp/memsa; mkdir -p $OUT
cd /work/main
PULSAR_BROADCAST_JAVA_OPTS="-Xmx6g -XX:MaxDirectMemorySize=4g -XX:+UseG1GC" nohup bin/pulsar-broadcast standalone --wipe \
  --data-dir /tmp/memsa --port 16650 --web-port 18080 --zookeeper-port 12181 --bookie-port 13181 > $OUT/standalone.log 2>&1 &
for i in $(seq 1 120); do curl -sf http://127.0.0.1:18080/admin/v2/clusters >/dev/null && break; sleep 1; done
PID=$(pgrep -f "standalone.*--data-dir /tmp/memsa" | head -1)
JPID=$(pgrep -f "java.*/tmp/memsa" | head -1)
echo "broker java pid $JPID" > $OUT/info.txt
sleep 5
jcmd $JPID GC.class_histogram > $OUT/hist-before.txt
( bin/pulsar-broadcast bench --client fleet --consumers $N --consumers-per-connection $K --message-size 1024 --rate 1 \
   --warmup 5 --duration 90 --no-progress --modes broadcast --metrics-interval 0 \
   --service-url pulsar://127.0.0.1:16650 --admin-url http://127.0.0.1:18080 --broker-pid $JPID --out $OUT/bench > $OUT/bench.log 2>&1 ) &
BP=$!
for i in $(seq 1 600); do
  c=$(curl -s http://127.0.0.1:18080/metrics/ | awk '/^pulsar_broadcast_consumers\{/ {s+=$NF} END {print s+0}')
  [ "${c%.*}" -ge "$N" ] && break; sleep 1
done
sleep 20
echo "connected consumers $c at $(date -u +%T)" >> $OUT/info.txt
jcmd $JPID GC.class_histogram > $OUT/hist-connected.txt
curl -s http://127.0.0.1:18080/metrics/ | grep -E "^jvm_memory_direct_bytes_used|^jvm_memory_bytes_used" >> $OUT/info.txt
wait $BP
sleep 10
jcmd $JPID GC.class_histogram > $OUT/hist-after.txt
curl -s http://127.0.0.1:18080/metrics/ | grep -E "^pulsar_broadcast_retained_positions|^pulsar_broadcast_consumers\{" >> $OUT/info.txt
kill $PID $JPID; sleep 5; kill -9 $JPID 2>/dev/null
echo done >> $OUT/info.txt
