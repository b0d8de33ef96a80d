#!/bin/bash
# the seventeenth session's floor pairs (back to back)
R=docs/results/issue11-fleet-sixteenth/run.sh
export OUT=/tmp/exp17 MODE=floor
PER_CONNECTION=5000 RATE=5 $R bp-before-k5000-r5 /tmp/exp17/before.jar
PER_CONNECTION=5000 RATE=5 $R bp-after-k5000-r5 /tmp/exp17/after.jar
PER_CONNECTION=5000 RATE=4.5 $R bp-after-k5000-r4.5 /tmp/exp17/after.jar
PER_CONNECTION=100 RATE=5 $R bp-after-k100-r5 /tmp/exp17/after.jar
PER_CONNECTION=100 RATE=5 $R bp-before-k100-r5 /tmp/exp17/before.jar
cp /tmp/exp17/after.jar /work/main/benchmark/target/benchmark-2.10.5.0-SNAPSHOT.jar
echo done
