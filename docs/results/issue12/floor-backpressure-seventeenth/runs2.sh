#!/bin/bash
# broker at 500,000 deliveries/s asked, both layouts, after the floor pair (same machine, same hour)
R=docs/results/issue11-fleet-sixteenth/run.sh
export OUT=/tmp/exp17 MODE=broadcast
PER_CONNECTION=5000 RATE=5 $R br-k5000-r5 /tmp/exp17/after.jar
PER_CONNECTION=100 RATE=5 $R br-k100-r5 /tmp/exp17/after.jar
PER_CONNECTION=100 RATE=4 $R br-k100-r4 /tmp/exp17/after.jar
echo done
