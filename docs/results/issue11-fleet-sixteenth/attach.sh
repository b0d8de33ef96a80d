#!/bin/bash
# attach async-profiler to the run's fleet process (or, with PATTERN=FloorMain, the floor server) for 40 s of its
# measured window:  attach.sh OUT [PROFILER-OPTIONS]
out=$1; opts=${2:-event=cpu,interval=1ms}
for i in $(seq 1 600); do
  pid=$(pgrep -f "${PATTERN:-FleetMain .*run-[0-9]*-1-p0.json}" | head -1)
  [ -n "$pid" ] && break; sleep 0.5
done
echo "pid $pid $(date +%s)"
sleep 38
java /work/main/docs/results/issue11-fleet-sixteenth/Attach.java $pid /tmp/ap/linux-x64/libasyncProfiler.so start,$opts,threads ; date +%s
sleep 40
java /work/main/docs/results/issue11-fleet-sixteenth/Attach.java $pid /tmp/ap/linux-x64/libasyncProfiler.so stop,file=$out,collapsed; date +%s
