#!/bin/bash
# Twenty-third session (run as /tmp/s23/prof/run.sh; floor-window.collapsed.gz here = the floor server's files
# f-<pid>-20261127-033403 and -033433, 60 s inside the publishing phase): a CPU profile of the floor server that writes as the broker does (async-profiler 3.0, 10 ms,
# threads, one collapsed file per 30 s and process), the goal-2 layout, to compare its event loops with the broker's
# (the twenty-second session's profile, the same plugin code).
cd /work/main
ap=/tmp/ap/linux-x64/libasyncProfiler.so; out=/tmp/s23/prof
flock /tmp/pb-heavy.lock bin/pulsar-broadcast bench --client fleet --modes floor --consumers 100000 \
  --consumers-per-connection 100 --message-size 1024 --rate 1 --warmup 60 --duration 60 --metrics-interval 5 \
  --fleet-java-opts "-Xms256m -Xmx2g -XX:+UseSerialGC -XX:MaxDirectMemorySize=4g -agentpath:$ap=start,event=cpu,interval=10ms,threads,loop=30s,file=$out/f-%p-%t.collapsed,collapsed" \
  --out $out/run > $out/run.log 2>&1
echo "prof done $(date -u +%H:%M:%S)" >> $out/progress
