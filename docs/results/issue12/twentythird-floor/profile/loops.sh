#!/bin/bash
# The event-loop threads' samples of one async-profiler collapsed file (event=cpu, threads), by what they were doing;
# each sample counted once, in the first category that matches, in this order.
#   loops.sh FILE.collapsed[.gz] THREAD_PREFIX     (pulsar-io for the broker, floor-io for the floor server)
f=$1; t=$2
cat_() { case $f in *.gz) zcat "$f";; *) cat "$f";; esac; }
cat_ | grep "^\[$t" | awk '{n=$NF; tot+=n;
  if ($0 ~ /handleAck/) c["acknowledgements (after decoding)"]+=n;
  else if ($0 ~ /handleFlow/) c["flow permits (after decoding)"]+=n;
  else if ($0 ~ /MessageFrames\.add|FloorFrames\.add/) c["message frames (command and copy)"]+=n;
  else if ($0 ~ /doWrite|writev|invokeFlush|flush0/) c["socket writes"]+=n;
  else if ($0 ~ /channelRead|ByteToMessageDecoder|epollInReady/) c["socket reads and command decoding"]+=n;
  else if ($0 ~ /epollWait|epoll_wait|epollBusyWait/) c["epoll wait"]+=n;
  else if ($0 ~ /runAllTasks|runTasks|safeExecute/) c["other tasks"]+=n;
  else c["other"]+=n}
  END {printf "%5d 100.0%%  all event-loop samples\n", tot; for (k in c) printf "%5d %4.1f%%  %s\n", c[k], 100*c[k]/tot, k}' | sort -k1 -rn
