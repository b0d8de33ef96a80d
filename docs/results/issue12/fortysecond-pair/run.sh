#!/bin/bash
# Forty-second session, issue 12 goal 2's command as a check that the forty-first and forty-second sessions' changes
# to the delivery path (transactions: one boolean per consumer and entry in FanOut.sendFrom, one max-read-position per
# tail read, the withheld-set checks; this session: one branch per acknowledged id) cost nothing the pairs resolve.
# For each NAME the plugin jar $JARS/PREFIX.jar (PREFIX: NAME up to its first '-'; base = d63b850, the fortieth
# session's last commit; main = f43cbc2) is put where the benchmark's class path names it, and the fleet runs 100,000
# consumers, 100 per connection, 1 KB at 1 msg/s, with a 60-s warm-up. Check each report's "plugin classes" line and
# its SHA-256. It ends by putting main back.
#   JARS=/tmp/s42/jars OUT=/tmp/s42/g2 run.sh base-1 main-1 base-2 main-2   (then: run.sh main-3 base-3)
cd /work/main
jars=${JARS:-/tmp/s42/jars}; out=${OUT:-/tmp/s42/g2}
mkdir -p $out
t=$(tr ':' '\n' < benchmark/target/classpath.txt | grep '/broadcast-subscription-[^/]*\.jar$')
for name in "$@"; do
  cp $jars/${name%%-*}.jar $t
  bin/pulsar-broadcast bench --client fleet --modes broadcast --consumers 100000 \
    --consumers-per-connection 100 --message-size 1024 --rate 1 --warmup 60 --duration 60 --metrics-interval 5 \
    --out $out/$name > $out/$name.log 2>&1
  echo "$name done $(date -u +%H:%M:%S)" >> $out/progress
done
cp $jars/main.jar $t
