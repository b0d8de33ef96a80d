#!/bin/bash
# Twenty-fourth session, issue 12 goal 2, experiment 15 (the acks applied on the event loop timed and counted once
# per read, and the consumer map of primitive keys): for each NAME the plugin jar $JARS/PREFIX.jar (PREFIX: NAME up
# to its first '-'; base = issue 11's build 9fa9084, main = b011c5e's plugin (unchanged to 94ebc04), e15 = this
# experiment) is put where the benchmark's class path names it and the fleet runs 100,000 consumers, 100 per
# connection, 1 KB at 1 msg/s, with a 60-s warm-up (the goal-2 command). With PROFILE=1 the broker runs under
# async-profiler 3.0 (CPU, 10 ms, threads, one collapsed file per 30 s in $OUT/NAME-prof). Check each report's
# "plugin classes" line and its SHA-256. It ends by putting e15 back.
#   JARS=/tmp/s24/jars OUT=/tmp/s24/g2 PROFILE=1 run.sh main-p e15-p;  run.sh main-1 e15-1 base-1 e15-2 ...
cd /work/main
jars=${JARS:-/tmp/s24/jars}; out=${OUT:-/tmp/s24/g2}; ap=${AP:-/tmp/ap/linux-x64/libasyncProfiler.so}
mkdir -p $out
t=$(tr ':' '\n' < benchmark/target/classpath.txt | grep '/broadcast-subscription-[^/]*\.jar$')
for name in "$@"; do
  cp $jars/${name%%-*}.jar $t
  opts=()
  if [[ -n $PROFILE ]]; then
    mkdir -p $out/$name-prof
    opts=(--broker-java-opts "-agentpath:$ap=start,event=cpu,interval=10ms,threads,loop=30s,file=$out/$name-prof/b-%t.collapsed,collapsed")
  fi
  flock /tmp/pb-heavy.lock bin/pulsar-broadcast bench --client fleet --modes broadcast --consumers 100000 \
    --consumers-per-connection 100 --message-size 1024 --rate 1 --warmup 60 --duration 60 --metrics-interval 5 \
    "${opts[@]}" --out $out/$name > $out/$name.log 2>&1
  echo "$name done $(date -u +%H:%M:%S)" >> $out/progress
done
cp $jars/e15.jar $t
