#!/bin/bash
# Twenty-third session, issue 12 goal 2: an ablation of the plugin's periodic per-consumer work. NAME "main-*" runs
# the goal-2 command (100,000 consumers, 100 per connection, 1 KB at 1 msg/s, 60-s warm-up, fleet) on the plugin of
# b011c5e (SHA-256 535e712c410f in every report); NAME "off-*" runs the same with periodic-off.conf here added to the
# broker's configuration: the once-a-second scan (mark-delete sync), the 5-s copy into the stock consumer stats and
# the 5-s position save pushed to once an hour, so none of them runs inside a run. Not a candidate configuration
# (storage is not released, positions are not saved): it measures what that work costs.
#   OUT=/tmp/s23/abl run.sh main-1 off-1 main-2 off-2 off-3 main-3 off-4 main-4
# Tables: ../twentysecond-threads/threads.py main-1 off-1 ... (run in OUT)
cd /work/main; out=${OUT:-/tmp/s23/abl}; conf=$(cd "$(dirname "$0")" && pwd)/periodic-off.conf
mkdir -p $out
for name in "$@"; do
  extra=""
  if [[ $name == off-* ]]; then extra="--broker-config $conf"; fi
  flock /tmp/pb-heavy.lock bin/pulsar-broadcast bench --client fleet --modes broadcast --consumers 100000 \
    --consumers-per-connection 100 --message-size 1024 --rate 1 --warmup 60 --duration 60 --metrics-interval 5 \
    $extra --out $out/$name > $out/$name.log 2>&1
  echo "$name done $(date -u +%H:%M:%S)" >> $out/progress
done
