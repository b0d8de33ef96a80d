#!/bin/bash
# Twenty-fourth session, experiment 16: the order the runs of this directory were made in (run-jvm.sh beside it; the
# first line waited for the previous chain of runs to end).
cd /work/main
while kill -0 16109 2>/dev/null; do sleep 5; done
TOPTS="-Xms6g -XX:+AlwaysPreTouch" docs/results/issue12/twentyfourth-jvm/run-jvm.sh main-tpre1
TOPTS="-XX:+UseTransparentHugePages" docs/results/issue12/twentyfourth-jvm/run-jvm.sh main-thp1
docs/results/issue12/twentyfourth-jvm/run-jvm.sh main-t5 base-t3
TOPTS="-Xms6g -XX:+AlwaysPreTouch" docs/results/issue12/twentyfourth-jvm/run-jvm.sh main-tpre2
TOPTS="-XX:+UseTransparentHugePages" docs/results/issue12/twentyfourth-jvm/run-jvm.sh main-thp2
docs/results/issue12/twentyfourth-jvm/run-jvm.sh main-t6
echo chain3 done $(date -u +%H:%M:%S) >> /tmp/s24/jvm/progress
