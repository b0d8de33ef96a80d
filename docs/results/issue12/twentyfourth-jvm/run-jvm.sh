#!/bin/bash
# Twenty-fourth session, experiment 16 (the broker's JVM settings): as run.sh here (the goal-2 command: 100,000
# consumers, 100 per connection, 1 KB at 1 msg/s, 60-s warm-up, fleet), the plugin jar $JARS/PREFIX.jar for each NAME
# (PREFIX: NAME up to its first '-'), and for a NAME whose second part starts with 't' (main-t1, base-t2, ...) the
# broker's JVM also gets $TOPTS (default: the heap committed and touched at start, on transparent huge pages).
#   JARS=/tmp/s24/jars OUT=/tmp/s24/jvm run-jvm.sh main-n1 main-t1 main-n2 main-t2 ...
cd /work/main
jars=${JARS:-/tmp/s24/jars}; out=${OUT:-/tmp/s24/jvm}
topts=${TOPTS:--Xms6g -XX:+AlwaysPreTouch -XX:+UseTransparentHugePages}
mkdir -p $out
t=$(tr ':' '\n' < benchmark/target/classpath.txt | grep '/broadcast-subscription-[^/]*\.jar$')
for name in "$@"; do
  cp $jars/${name%%-*}.jar $t
  opts=()
  rest=${name#*-}
  if [[ $rest == t* ]]; then opts=(--broker-java-opts "$topts"); fi
  flock /tmp/pb-heavy.lock bin/pulsar-broadcast bench --client fleet --modes broadcast --consumers 100000 \
    --consumers-per-connection 100 --message-size 1024 --rate 1 --warmup 60 --duration 60 --metrics-interval 5 \
    "${opts[@]}" --out $out/$name > $out/$name.log 2>&1
  echo "$name done $(date -u +%H:%M:%S)" >> $out/progress
done
