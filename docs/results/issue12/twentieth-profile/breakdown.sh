#!/bin/bash
# Where the CPU samples of the twentieth session's two profiles fell (async-profiler 3.0, event=cpu, interval=10ms,
# threads; 100,000 consumers, 1 KB at 1 msg/s; the files that cover the measured window, concatenated):
#   broker: 100 per connection, 60-s warm-up (broker-profile-results.md); fleet: 5,000 per connection, 30-s warm-up
#   (fleet-profile-results.md). Each sample is counted once, in the first category that matches, in this order.
#   breakdown.sh   (run in this directory)
#   breakdown.sh BROKER.collapsed.gz   (the broker's categories alone, for another profile: the twenty-second session's)
broker=${1:-broker-measured-window.collapsed.gz}
zcat "$broker" | awk '{n=$NF; tot+=n;
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
[ $# -gt 0 ] && exit 0
zcat fleet-measured-window.collapsed.gz | awk '{n=$NF; tot+=n;
  if ($0 ~ /^\[C[12] Compiler/) c["JIT compiler threads"]+=n;
  else if ($0 ~ /channelReadComplete/) c["writing the gathered acks"]+=n;
  else if ($0 ~ /cumulate/) c["decoder: appending a read to the partial frame"]+=n;
  else if ($0 ~ /_copy_to_iter|tcp_recvmsg|readBytes/) c["socket reads (kernel copy)"]+=n;
  else if ($0 ~ /CommandBatch/) c["serializing acks and flows (CommandBatch)"]+=n;
  else if ($0 ~ /crc32c/) c["checksums"]+=n;
  else if ($0 ~ /EntryReader.read/) c["entry metadata parsing"]+=n;
  else if ($0 ~ /SimConsumer.onEntry/) c["per-message bookkeeping (clocks, histograms)"]+=n;
  else if ($0 ~ /PulsarDecoder.channelRead/) c["command parsing (pulsar-common)"]+=n;
  else if ($0 ~ /epoll/) c["epoll"]+=n;
  else c["other"]+=n}
  END {printf "%5d 100.0%%  fleet: all samples\n", tot; for (k in c) printf "%5d %4.1f%%  %s\n", c[k], 100*c[k]/tot, k}' | sort -k1 -rn
