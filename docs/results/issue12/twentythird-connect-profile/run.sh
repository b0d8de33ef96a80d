#!/bin/bash
# Twenty-third session (connect.collapsed.gz here = the files b-20261127-040125 and -040130, the 10 s of the connect
# burst: 361 of the run's 435 handleSubscribe samples): a CPU profile of the broker's connect phase (async-profiler 3.0, CPU, 10 ms, threads, one
# collapsed file per 5 s), the goal-2 command (100,000 consumers, 100 per connection), plugin of b011c5e.
cd /work/main
ap=/tmp/ap/linux-x64/libasyncProfiler.so; out=/tmp/s23/cprof
flock /tmp/pb-heavy.lock bin/pulsar-broadcast bench --client fleet --modes broadcast --consumers 100000 \
  --consumers-per-connection 100 --message-size 1024 --rate 1 --warmup 10 --duration 20 --metrics-interval 5 \
  --broker-java-opts "-agentpath:$ap=start,event=cpu,interval=10ms,threads,loop=5s,file=$out/b-%t.collapsed,collapsed" \
  --out $out/run > $out/run.log 2>&1
echo "done $(date -u +%H:%M:%S)" >> $out/progress
