#!/bin/bash
# Twenty-fourth session, experiment 16: the order the runs of this directory were made in (run-jvm.sh beside it; the
# first line waited for the previous chain of runs to end).
cd /work/main
while kill -0 12644 2>/dev/null; do sleep 5; done
docs/results/issue12/twentyfourth-jvm/run-jvm.sh main-t1 main-n4 main-t2 base-t1 main-t3 main-n5 base-t2 main-t4
mkdir -p /tmp/s24/jvm/main-tp-prof
TOPTS="-Xms6g -XX:+AlwaysPreTouch -XX:+UseTransparentHugePages -agentpath:/tmp/ap/linux-x64/libasyncProfiler.so=start,event=cpu,interval=10ms,threads,loop=30s,file=/tmp/s24/jvm/main-tp-prof/b-%t.collapsed,collapsed" docs/results/issue12/twentyfourth-jvm/run-jvm.sh main-tp
cp /tmp/s24/jars/e15.jar $(tr ':' '\n' < benchmark/target/classpath.txt | grep '/broadcast-subscription-[^/]*\.jar$')
echo chain2 done $(date -u +%H:%M:%S) >> /tmp/s24/jvm/progress
