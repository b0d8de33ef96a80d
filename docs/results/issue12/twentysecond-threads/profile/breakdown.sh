#!/bin/bash
# Where the CPU samples of the twenty-second session's broker profile fell: the broker half of the twentieth
# session's breakdown.sh (docs/results/issue12/twentieth-profile) applied to broker-window.collapsed.gz, the two
# 30-s files of async-profiler 3.0 (event=cpu, interval=10ms, threads) that cover the measured minute of
# profile-run-results.md (7f0c7f5's plugin, 100,000 consumers, 100 per connection, 60-s warm-up, 2026-11-26 23:39-23:40
# UTC). Each sample is counted once, in the first category that matches, in this order.
#   breakdown.sh   (run in this directory)
zcat broker-window.collapsed.gz | awk '{n=$NF; tot+=n;
  if ($0 ~ /^\[C[12] Compiler/) c["JIT compiler threads"]+=n;
  else if ($0 ~ /RetainedCursors.scan/) c["periodic sync: the scan over every position"]+=n;
  else if ($0 ~ /SubscriptionEngine.sync/) c["periodic sync: the rest"]+=n;
  else if ($0 ~ /TailReads.serveWaiting/) c["tail fan-out pass (dispatch thread)"]+=n;
  else if ($0 ~ /^\[broadcast-dispatch/) c["dispatch thread, other"]+=n;
  else if ($0 ~ /^\[broadcast-position-saves/) c["position saves"]+=n;
  else if ($0 ~ /StockConsumerStats|pulsar-stats-updater/) c["stats publication"]+=n;
  else if ($0 ~ /ConnectionSend.run/ && $0 ~ /invokeFlush/) c["event loop: the write into the socket (flush)"]+=n;
  else if ($0 ~ /MessageFrames.add/) c["event loop: message frames (command and copy)"]+=n;
  else if ($0 ~ /ConnectionSend.run/) c["event loop: the rest of a connection send"]+=n;
  else if ($0 ~ /handleAck/) c["event loop: acknowledgements"]+=n;
  else if ($0 ~ /handleFlow/) c["event loop: flow permits"]+=n;
  else if ($0 ~ /channelRead|ByteToMessageDecoder/) c["event loop: reading and decoding commands"]+=n;
  else if ($0 ~ /epoll/) c["event loop: epoll"]+=n;
  else if ($0 ~ /^\[GC|^\[VM Thread/) c["GC and VM"]+=n;
  else c["other"]+=n}
  END {printf "%5d 100.0%%  broker: all samples\n", tot; for (k in c) printf "%5d %4.1f%%  %s\n", c[k], 100*c[k]/tot, k}' | sort -k1 -rn
